//! What a plugin load registered, as the app keeps it: the prompt
//! sections, the tool definitions and the load's warnings (a leaf: the
//! effect runner fills it, the app and the views read it).

use fs_search_engine::RG_MISSING_WARNING;
use fs_search_engine::registry::{PromptSection, ToolDefinition};

/// What a successful load registered.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadInfo {
    pub sections: Vec<PromptSection>,
    pub tools: Vec<ToolDefinition>,
    pub warnings: Vec<String>,
}

impl LoadInfo {
    /// The load found no rg and registered nothing.
    pub fn rg_missing(&self) -> Option<&str> {
        self.warnings
            .iter()
            .find(|w| w.as_str() == RG_MISSING_WARNING)
            .map(String::as_str)
    }
}
