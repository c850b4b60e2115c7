//! Token counts for the workbench: loading the tokenizer the
//! commands count with (the embedded DeepSeek V4 one, or `--tokenizer
//! FILE`) and the request prefix of a loaded registry. Nothing that does
//! not ask for tokens calls into this module: loading costs ~0.4 s.

use std::path::Path;

use fs_search_engine::registry::{PromptSection, ToolDefinition};
use fs_search_tokens::{Error, Part, Tokenizer};

/// The tokenizer in `file`, or the embedded one. An error names the file.
pub(crate) fn load(file: Option<&Path>) -> Result<Tokenizer, Error> {
    match file {
        Some(path) => Tokenizer::from_file(path),
        None => Tokenizer::embedded(),
    }
}

/// Loads the tokenizer on a blocking thread (it takes a noticeable time),
/// so the caller can do something else meanwhile.
pub fn load_in_background(
    file: Option<&Path>,
) -> tokio::task::JoinHandle<Result<Tokenizer, Error>> {
    let file = file.map(Path::to_path_buf);
    tokio::task::spawn_blocking(move || load(file.as_deref()))
}

/// Awaits [`load_in_background`], a panic of the loading thread as an
/// error.
pub async fn join(
    handle: tokio::task::JoinHandle<Result<Tokenizer, Error>>,
) -> Result<Tokenizer, Error> {
    handle.await.unwrap_or_else(|e| {
        Err(Error::Embedded {
            reason: format!("the tokenizer failed to load: {e}"),
        })
    })
}

/// The request prefix of a registry: its prompt sections in order, then
/// its tool definitions in order, each tool as
/// [`fs_search_tokens::tool_definition_text`] serializes it. Empty when
/// nothing is registered (rg missing: what the model would see).
pub fn request_parts(sections: &[PromptSection], tools: &[ToolDefinition]) -> Vec<Part> {
    let mut parts: Vec<Part> = sections
        .iter()
        .map(|s| Part::section(s.name.clone(), s.text.clone()))
        .collect();
    parts.extend(
        tools
            .iter()
            .map(|t| Part::tool_definition(&t.name, &t.description, &t.parameters)),
    );
    parts
}

/// A loaded tokenizer shared between the TUI's state and its effects;
/// equal when it is the same instance.
#[derive(Debug, Clone)]
pub struct SharedTokenizer(pub std::sync::Arc<Tokenizer>);

impl PartialEq for SharedTokenizer {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// `n` with thousands separators: `1,234`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1234), "1,234");
        assert_eq!(thousands(45678), "45,678");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
