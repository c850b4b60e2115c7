//! The workbench's one way to write a message to the terminal: a line on
//! stderr ([`write_line`], called as `stderr_line!`). The print macros are denied in the whole
//! workspace (`clippy::print_stdout`, `clippy::print_stderr`), so nothing
//! else writes to the terminal by accident; above all nothing writes to
//! the MCP server's stdout, which carries only JSON-RPC. Results that
//! belong on stdout go through explicit writers (the headless commands'
//! output, the MCP server's writer).

use std::fmt;
use std::io::Write as _;

/// Writes one line to stderr. A stderr that cannot be written (a closed
/// pipe) loses the line; unlike `eprintln!`, it never panics.
pub fn write_line(line: fmt::Arguments<'_>) {
    let mut stderr = std::io::stderr().lock();
    // Nowhere left to report a failed report.
    let _ = writeln!(stderr, "{line}");
}

/// `eprintln!` through [`write_line`]: formats its arguments as one line
/// on stderr.
#[macro_export]
macro_rules! stderr_line {
    ($($arg:tt)*) => {
        $crate::write_line(format_args!($($arg)*))
    };
}
