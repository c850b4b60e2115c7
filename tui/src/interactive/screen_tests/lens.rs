//! The Text tab through a host lens, on whole screens:
//! `L` cycles the lens over a real grep page large enough for every
//! host to cut (one file, so rg's thread order cannot reorder it); the
//! verdict, the `✂` marker, the token counts and the lens staying for
//! later calls and error results are asserted on the drawn screen and on
//! what `workbench call --host` would hand the same lens.

use serde_json::json;

use super::{DURATION, Harness, buffer_text, screen_filters, tokenizer};
use crate::interactive::content;
use crate::interactive::scroll_doc::{LineKind, visible};
use crate::interactive::tabs::Tab;
use fs_search_lens::{Lens, Lensed, hosts, resolve};

/// One file of 300 matching lines of 420 bytes: a 250-match page of
/// about 105 KB (the default cap), with a footer and a spill locator.
fn long_lines() -> String {
    (0..300)
        .map(|i| format!("needle {i:04} {}\n", "x".repeat(408)))
        .collect()
}

async fn grep_page() -> Harness {
    let text = long_lines();
    let files = [("data/long.txt", text.as_str())];
    let mut h = Harness::new(&files, json!({"sampleOverCapGlobResults": false}), 100, 30).await;
    h.keys("te<C-u>needle<Enter><Esc>").await;
    let record = h.app.state.shown_record().unwrap();
    assert!(
        record.text().starts_with("Found 250 of 300 matches"),
        "{}",
        &record.text()[..80]
    );
    assert!(record.spill().is_some());
    h
}

/// What `workbench call --host` hands `lens` for the shown call: the
/// result the MCP server sends, through the one conversion.
fn expected(h: &Harness, lens: &'static Lens) -> Lensed {
    let record = h.app.state.shown_record().unwrap();
    let sent =
        fs_search_mcp::of_tool_result(record.ran().unwrap(), DURATION.as_secs_f64() * 1000.0);
    let input = fs_search_mcp::lens_input(&sent, &record.tool, &record.args);
    crate::host_report::HostReport::new(lens, &input, &record.ran().unwrap().parts).lensed
}

/// The pane's top edge (header, five editor rows, tabs, summary above).
fn title(screen: &str) -> &str {
    screen.lines().nth(8).unwrap_or_default()
}

/// The shown call's Text tab document, as lines.
fn text_doc_lines(h: &Harness) -> Vec<(String, LineKind)> {
    let doc = content::tab_doc(&h.app.state, Tab::Text).unwrap();
    doc.lines.iter().map(|l| (l.text.clone(), l.kind)).collect()
}

#[tokio::test]
async fn l_cycles_each_hosts_lens_and_back_to_the_exact_page() {
    let mut h = grep_page().await;
    let page_screen = h.screen();
    assert!(
        title(&page_screen).contains("Text: exactly what the model sees"),
        "{page_screen}"
    );
    for host in hosts() {
        let lens = resolve(host).unwrap();
        h.keys("L").await;
        let screen = h.screen();
        let name = lens.name();
        assert!(
            title(&screen).contains(&format!(" Text · {name}: what the host's model receives")),
            "{screen}"
        );
        let lensed = expected(&h, lens);
        assert_ne!(
            lensed.cut,
            fs_search_lens::Cut::None,
            "{name} cuts this page"
        );
        // The verdict is the first line, then the lensed text, unchanged.
        let page = h.app.state.shown_record().unwrap();
        let verdict = content::lens::lensed_page(page, lens)
            .unwrap()
            .summary
            .clone();
        assert!(
            verdict.starts_with(&format!("{name} removes ")),
            "{verdict}"
        );
        assert!(verdict.contains("of 250 matches and "), "{verdict}");
        let first_row = screen.lines().nth(9).unwrap();
        assert!(
            first_row.starts_with('│') && first_row.contains(&verdict[..40]),
            "{first_row:?}"
        );
        let stored = &content::lens::lensed_page(page, lens).unwrap().text;
        assert_eq!(stored, &lensed.text, "{name}");
        let lines = text_doc_lines(&h);
        let doc = content::tab_doc(&h.app.state, Tab::Text).unwrap();
        let shown: Vec<String> = lensed.text.split('\n').map(visible).collect();
        assert_eq!(
            content::lens::drawn_text(doc),
            shown.join("\n"),
            "{name}: the lensed text, line for line"
        );
        // One marker per removed region, saying how much went.
        let markers: Vec<&String> = lines
            .iter()
            .filter(|(_, kind)| *kind == LineKind::Cut)
            .map(|(text, _)| text)
            .collect();
        assert!(!markers.is_empty(), "{name}");
        let removed: usize = markers
            .iter()
            .map(|m| {
                let bytes = m
                    .strip_prefix(&format!("{name} removed "))
                    .and_then(|rest| rest.split(' ').next())
                    .unwrap_or_else(|| panic!("{m}"));
                bytes.replace(',', "").parse::<usize>().unwrap()
            })
            .sum();
        assert_eq!(removed, lensed.removed_bytes(), "{name}: {markers:?}");
    }
    // After the last host: no lens, the page exactly as before.
    h.keys("L").await;
    assert!(h.app.state.lens.is_none());
    assert_eq!(h.screen(), page_screen);
}

/// The cut marker stands where the host cut: opencode keeps the head, so
/// the `✂` line follows the last line it kept, before its own hint.
#[tokio::test]
async fn the_cut_marker_is_drawn_where_the_host_cut() {
    let mut h = grep_page().await;
    let lens = resolve("opencode").unwrap();
    h.app.set_lens(Some(lens));
    let lensed = expected(&h, lens);
    assert_eq!(lensed.cut, fs_search_lens::Cut::Head);
    let lines = text_doc_lines(&h);
    let at = lines
        .iter()
        .position(|(_, kind)| *kind == LineKind::Cut)
        .unwrap();
    let kept_end = lensed.kept[0].end;
    let last_kept_line = lensed.framed.text()[..kept_end].split('\n').count();
    // The verdict line, then the body lines up to the last kept one.
    let body_before = lines[..at]
        .iter()
        .filter(|(_, kind)| *kind == LineKind::Body)
        .count();
    assert_eq!(body_before, last_kept_line, "{:?}", &lines[at - 1..at + 2]);
    // Scrolled to the marker, the screen shows it in the gutter's ✂ (the
    // first frame tells the app the pane's width, which the rows follow).
    h.screen();
    let doc = content::tab_doc(&h.app.state, Tab::Text).unwrap();
    let cols = doc.text_cols(h.app.state.viewports.pane.cols);
    let row = doc.with_rows(cols, |rows| rows.iter().position(|r| r.line == at).unwrap());
    h.app.state.set_scroll(Tab::Text, row - 2);
    let screen = h.screen();
    let marker = format!(
        "✂ opencode@current removed {}",
        fs_search_process::thousands(lensed.removed_bytes())
    );
    assert!(screen.contains(&marker), "{screen}");
    // The host's own hint follows, as its model receives it.
    assert!(screen.contains("truncated..."), "{screen}");

    // Codex's one JSON line is broken where its middle cut falls: the
    // marker, then the rest of the line from the host's own marker on.
    h.app.set_lens(Some(resolve("codex").unwrap()));
    let lines = text_doc_lines(&h);
    let at = lines
        .iter()
        .position(|(_, kind)| *kind == LineKind::Cut)
        .unwrap();
    let (before, after) = (&lines[at - 1].0, &lines[at + 1].0);
    assert!(
        before.starts_with("[{\"type\":\"text\""),
        "{}",
        &before[..40]
    );
    assert!(
        after.starts_with('…') && after.contains(" tokens truncated…"),
        "{}",
        &after[..40]
    );
    let doc = content::tab_doc(&h.app.state, Tab::Text).unwrap();
    assert_eq!(
        (doc.lines[at - 1].number, doc.lines[at + 1].number),
        (Some(3), None)
    );
}

#[tokio::test]
async fn token_counts_follow_the_lens() {
    let mut h = grep_page().await;
    let shared = tokenizer();
    let effects = h.app.set_tokenizer(shared.clone());
    h.carry_out(effects).await;
    let record = h.app.state.shown_record().unwrap();
    let page = shared.0.count(record.text());
    let label = |n: usize| fs_search_process::thousands(n);
    let summary = |screen: &str| screen.lines().nth(7).unwrap_or_default().to_owned();
    assert!(summary(&h.screen()).contains(&format!(" {} tokens", label(page))));
    h.keys("L").await;
    let codex = resolve("codex").unwrap();
    let lensed = shared.0.count(&expected(&h, codex).text);
    assert!(
        lensed < page,
        "the cut page has fewer tokens: {lensed} vs {page}"
    );
    let screen = h.screen();
    assert!(
        summary(&screen).contains(&format!(
            "{} tokens via codex@0.120 (page {})",
            label(lensed),
            label(page)
        )),
        "{screen}"
    );
    // Each lens counts its own text.
    h.keys("L").await;
    let claude = resolve("claude-code").unwrap();
    let file = shared.0.count(&expected(&h, claude).text);
    assert_ne!(file, lensed);
    assert!(summary(&h.screen()).contains(&format!(
        "{} tokens via {}",
        label(file),
        claude.name()
    )));
    // Back to no lens: the page's count again.
    for _ in 2..hosts().len() {
        h.keys("L").await;
    }
    assert!(h.app.state.lens.is_some());
    h.keys("L").await;
    let screen = h.screen();
    assert!(!summary(&screen).contains(" via "), "{screen}");
    assert!(
        summary(&screen).contains(&format!(" {} tokens", label(page))),
        "{screen}"
    );
}

/// The lens is the session's: a later call (here an error result, which
/// goes through the lens as `workbench lens --error` sends one) is shown
/// through it too.
#[tokio::test]
async fn the_lens_stays_for_later_calls_and_errors_go_through_it() {
    let mut h = grep_page().await;
    h.keys("L").await;
    let codex = resolve("codex").unwrap();
    h.keys("e<C-u>(<Enter><Esc>").await;
    let screen = h.screen();
    assert!(title(&screen).contains(" Text · codex@0.120: "), "{screen}");
    let record = h.app.state.shown_record().unwrap();
    assert!(record.is_error());
    // The result the server sends says isError, and the lens gets it.
    let sent = fs_search_mcp::of_tool_result(record.ran().unwrap(), 4.2);
    assert!(fs_search_mcp::lens_input(&sent, "grep", &record.args).is_error);
    let lensed = expected(&h, codex);
    assert_eq!(
        content::lens::lensed_page(record, codex).unwrap().text,
        lensed.text
    );
    // A short error passes whole: as JSON text, after the Wall time lines.
    assert!(
        lensed
            .text
            .starts_with("Wall time: 0.0042 seconds\nOutput:\n[{"),
        "{}",
        lensed.text
    );
    let lines = text_doc_lines(&h);
    assert_eq!(
        lines[0].0,
        format!(
            "codex@0.120 passes the result whole ({} bytes framed)",
            lensed.framed.text().len()
        )
    );
    assert!(lines.iter().all(|(_, kind)| *kind != LineKind::Cut));
    assert!(screen.contains("Wall time: 0.0042 seconds"), "{screen}");
}

/// The top of the Text tab through Codex's lens.
#[tokio::test]
async fn text_through_the_codex_lens() {
    let mut h = grep_page().await;
    h.keys("L").await;
    let screen = h.screen();
    insta::with_settings!({
        filters => screen_filters(),
        prepend_module_to_snapshot => false,
        snapshot_path => "../snapshots",
    }, {
        insta::assert_snapshot!("text_through_the_codex_lens", screen);
    });
    // Drawn as the loop draws it, not a stale buffer.
    assert_eq!(buffer_text(h.terminal.backend().buffer()), screen);
}
