//! `gpubench report --format html` on the committed runs, with no GPU: one page that opens
//! from disk with nothing fetched, every suite and figure on it, every link to a file of the
//! run that exists; the fleet page of the two-H200 run with its odd figures on top and their
//! curves over each other; and, where Debian's Chromium is installed, the pages as a browser
//! renders them.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn committed(run: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("results")
        .join(run)
}

/// `report RUN --format html` into a new directory; the page's text.
fn page_of(run: &Path, out: &Path) -> String {
    reported(run, out).0
}

/// `report RUN --format html` into a new directory; the page's text and what it told on its
/// standard error.
fn reported(run: &Path, out: &Path) -> (String, String) {
    let made = Command::cargo_bin("gpubench")
        .unwrap()
        .arg("report")
        .arg(run)
        .args(["--format", "html", "--output"])
        .arg(out)
        .output()
        .unwrap();
    let told = String::from_utf8_lossy(&made.stderr).into_owned();
    assert!(made.status.success(), "{told}");
    (
        std::fs::read_to_string(out.join("index.html")).unwrap(),
        told,
    )
}

/// The suites of a committed `all` run, by their directories.
fn suites_of(run: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(run)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("metadata.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every `href="…"` and `src="…"` of the page.
fn references(page: &str) -> Vec<String> {
    let mut found = Vec::new();
    for attribute in ["href=\"", "src=\""] {
        for piece in page.split(attribute).skip(1) {
            found.push(piece.split('"').next().unwrap_or("").to_string());
        }
    }
    found
}

/// Debian's Chromium where it is installed. Under CI (`CI=true`; `.ci/run` installs it) a
/// missing browser fails the page tests instead of skipping them.
fn chromium() -> Option<PathBuf> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file());
    assert!(
        found.is_some() || std::env::var("CI").as_deref() != Ok("true"),
        "CI=true and no Chromium at /usr/bin/chromium: .ci/run installs it (apt-get install chromium)"
    );
    found
}

/// Chromium, headless, on the page at `page` with `extra` arguments; a profile under `scratch`.
fn render(browser: &Path, scratch: &Path, page: &Path, extra: &[&str]) -> std::process::Output {
    std::process::Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu"])
        .arg(format!(
            "--user-data-dir={}",
            scratch.join("profile").display()
        ))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap()
}

/// Nothing the page would fetch from elsewhere, and every link to a file resolves from `dir`.
fn self_contained(page: &str, dir: &Path) {
    for fetch in ["<script", "<link", "@import", "<img", "<iframe", "url("] {
        assert!(!page.contains(fetch), "{fetch}");
    }
    for reference in references(page) {
        if reference.starts_with('#') || reference.starts_with("http://www.w3.org/") {
            continue;
        }
        assert!(!reference.contains("://"), "{reference}");
        // Inside the page's directory: the page and its data move together (#75).
        assert!(
            !reference.starts_with('/') && !reference.split('/').any(|part| part == ".."),
            "{reference} points outside the page's directory"
        );
        assert!(
            dir.join(&reference).is_file(),
            "{reference} does not resolve"
        );
    }
}

/// Each suite of `run` that drew a plot when it ran (a PNG in its directory) has at least one
/// figure inline in its section of `page`.
fn a_plot_for_every_suite_that_draws_one(run: &Path, page: &str) {
    let mut drawn = 0;
    for suite in suites_of(run) {
        let draws = std::fs::read_dir(run.join(&suite))
            .unwrap()
            .any(|e| e.unwrap().path().extension().is_some_and(|x| x == "png"));
        if !draws {
            continue;
        }
        let start = page
            .find(&format!("<h2 id=\"{suite}\">"))
            .unwrap_or_else(|| panic!("no section for {suite}"));
        let end = page[start + 4..]
            .find("<h2")
            .map_or(page.len(), |at| start + 4 + at);
        assert!(
            page[start..end].contains("<svg"),
            "{suite} draws a plot, but its section holds none"
        );
        drawn += 1;
    }
    assert!(drawn >= 15, "{drawn} suites with plots");
}

/// The flagged rows' quantities of a `compare` Markdown table (its last column not empty).
fn flagged_in(markdown: &str) -> Vec<String> {
    markdown
        .lines()
        .skip(2)
        .filter(|l| l.starts_with("| "))
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
            let flag = cells.last()?.trim();
            (!flag.is_empty()).then(|| cells[0].trim().to_string())
        })
        .collect()
}

mod slow {
    use super::*;

    #[test]
    #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
    fn the_two_h200_fleet_page_puts_the_odd_figures_on_top_with_their_curves() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("html");
        let fleet = committed("h200x2");
        let (page, told) = reported(&fleet, &out);
        assert!(page.len() < 5 << 20, "{} bytes", page.len());
        // A fan-out's report says which GPU it is at, and from the second on what is left.
        assert!(
            told.contains("reporting GPU 1 of 2 (h200x2/gpu0-f64c03ac)\n")
                && told.contains("reporting GPU 2 of 2 (h200x2/gpu1-954a65b1), about "),
            "{told}"
        );
        self_contained(&page, &out);
        // Each GPU's own page beside it, linked from the header, with every suite.
        for gpu in ["gpu0-f64c03ac", "gpu1-954a65b1"] {
            let own = std::fs::read_to_string(out.join(gpu).join("index.html")).unwrap();
            assert!(page.contains(&format!("<a href=\"{gpu}/index.html\">")));
            assert!(page.contains(&format!("<th>h200x2/{gpu}</th>")));
            for suite in suites_of(&fleet.join(gpu)) {
                assert!(
                    own.contains(&format!("<h2 id=\"{suite}\">")),
                    "{gpu}: {suite}"
                );
            }
            self_contained(&own, &out.join(gpu));
        }
        // The rows the comparison flags are the page's odd ones, above every other figure.
        let markdown = std::fs::read_to_string(out.join("compare.md")).unwrap();
        let flagged = flagged_in(&markdown);
        assert!(
            !flagged.is_empty(),
            "the committed pair flags nothing any more"
        );
        let every = page.find("id=\"figures\"").unwrap();
        for quantity in &flagged {
            let shown = quantity.replace('\\', "");
            let at = page
                .find(&shown)
                .unwrap_or_else(|| panic!("{shown} not on the page"));
            assert!(at < every, "{shown} is not on top");
        }
        // The flagged TLB latency links to the TLB chase of both GPUs over each other.
        assert!(page.contains("<a href=\"#curves-cache-tlb\">"));
        let curves = &page[page.find("id=\"curves-cache-tlb\"").unwrap()..every];
        assert!(curves.contains("<svg"));
        assert!(curves.contains("h200x2/gpu0-f64c03ac") && curves.contains("h200x2/gpu1-954a65b1"));
    }

    #[test]
    #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
    fn compare_prints_the_same_fleet_page() {
        let fleet = committed("h200x2");
        let output = Command::cargo_bin("gpubench")
            .unwrap()
            .arg("compare")
            .arg(&fleet)
            .args(["--format", "html"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let page = String::from_utf8(output.stdout).unwrap();
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("gpubench fleet: 2 GPUs (NVIDIA H200)"));
        assert!(page.contains("id=\"curves-cache-tlb\""));
        // The committed GPUs have no page of their own beside them: none is linked.
        assert!(page.contains("none written"));
    }

    #[test]
    #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
    fn chromium_renders_the_fleet_page_offline() {
        let Some(browser) = chromium() else {
            eprintln!("skipped: no Chromium (apt-get install chromium) to render the page");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("html");
        let page = page_of(&committed("h200x2"), &out);
        let dom = render(
            &browser,
            dir.path(),
            &out.join("index.html"),
            &["--dump-dom"],
        );
        assert!(
            dom.status.success(),
            "{}",
            String::from_utf8_lossy(&dom.stderr)
        );
        let dom = String::from_utf8_lossy(&dom.stdout);
        for section in ["odd", "curves", "figures", "unresolved"] {
            assert!(
                dom.contains(&format!("id=\"{section}\"")),
                "{section} not rendered"
            );
        }
        assert_eq!(dom.matches("<svg").count(), page.matches("<svg").count());
    }

    #[test]
    #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
    fn the_h100_page_holds_every_suite_and_figure_and_fetches_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("html");
        let run = committed("h100/all");
        let page = page_of(&run, &out);
        assert!(page.len() < 5 << 20, "{} bytes", page.len());
        // The first suite's command as a reader types it, not the measuring machine's path to
        // the binary.
        assert!(page.contains("gpubench clock --device 0"));
        assert!(!page.contains("/work/main/target"));
        // The curated tables, on the page and beside it for a paper.
        for table in [
            "Memory hierarchy: per space and level",
            "Instruction latency",
        ] {
            assert!(page.contains(table), "{table}");
        }
        let tex = std::fs::read_to_string(out.join("tables.tex")).unwrap();
        assert!(tex.contains("\\toprule") && tex.contains("\\label{tab:memory}"));
        assert!(out.join("tables.md").is_file());
        for suite in suites_of(&run) {
            assert!(page.contains(&format!("<h2 id=\"{suite}\">")), "{suite}");
        }
        for section in ["roofline", "tables", "unresolved", "time"] {
            assert!(page.contains(&format!("id=\"{section}\"")), "{section}");
        }
        // Every figure drawn is on the page, inline.
        let drawn = walk(&out)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "svg"))
            .count();
        assert!(drawn >= 20, "{drawn} figures");
        assert_eq!(page.matches("<svg").count(), drawn);
        assert!(
            references(&page).iter().any(|r| r.ends_with(".sass.gz")),
            "no SASS linked"
        );
        self_contained(&page, &out);
        a_plot_for_every_suite_that_draws_one(&run, &page);
        // Moved elsewhere, the page's every link still resolves.
        let moved = dir.path().join("elsewhere/page");
        std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
        std::fs::rename(&out, &moved).unwrap();
        self_contained(&page, &moved);
    }

    #[test]
    #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
    fn chromium_renders_the_page_offline() {
        let Some(browser) = chromium() else {
            eprintln!("skipped: no Chromium (apt-get install chromium) to render the page");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("html");
        let run = committed("h100/all");
        let page = page_of(&run, &out);
        let headless =
            |extra: &[&str]| render(&browser, dir.path(), &out.join("index.html"), extra);
        let dom = headless(&["--dump-dom"]);
        assert!(
            dom.status.success(),
            "{}",
            String::from_utf8_lossy(&dom.stderr)
        );
        let dom = String::from_utf8_lossy(&dom.stdout);
        for suite in suites_of(&run) {
            assert!(
                dom.contains(&format!("id=\"{suite}\"")),
                "{suite} not rendered"
            );
        }
        assert_eq!(dom.matches("<svg").count(), page.matches("<svg").count());
        // The headline block comes first, every line a link to its suite's section.
        let first = dom.find("<h2").expect("a section");
        assert!(
            dom[first..].starts_with("<h2 id=\"headline\">Headline</h2>"),
            "{}",
            &dom[first..first + 80]
        );
        let block = &dom[first..dom[first..].find("</table>").unwrap() + first];
        assert!(block.matches("<tr>").count() >= 15, "{block}");
        for anchor in block.split("href=\"#").skip(1) {
            let id = anchor.split('"').next().unwrap();
            assert!(dom.contains(&format!("id=\"{id}\"")), "#{id} leads nowhere");
        }
        let shot = dir.path().join("page.png");
        let taken = headless(&[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1400,2000",
        ]);
        assert!(taken.status.success());
        assert!(std::fs::metadata(&shot).is_ok_and(|m| m.len() > 10_000));
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// The committed page of the H100 run: every link resolves inside its own directory (the
/// run's files it links are copied into its `data/`), and every suite that draws a plot has
/// one on it.
#[test]
fn the_committed_page_links_resolve_inside_its_own_directory() {
    let page_dir = committed("h100/all/report-html");
    let page = std::fs::read_to_string(page_dir.join("index.html")).unwrap();
    let refs = references(&page);
    assert!(refs.len() > 50, "{} links", refs.len());
    self_contained(&page, &page_dir);
    a_plot_for_every_suite_that_draws_one(&committed("h100/all"), &page);
}
