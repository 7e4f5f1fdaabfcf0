//! `cargo xtask catalog refresh`: what the public crawler lists know that the
//! catalog does not (yet), and what the catalog cites that they dropped.
//!
//! Network I/O goes only to the npm registry, through the `npm` CLI
//! (`npm pack isbot crawler-user-agents`), into
//! `<target>/catalog-refresh/`; `node` reads isbot's exported list. The
//! command prints a report for review and changes nothing in the repository:
//! new patterns are still written by hand, with sources (docs/CATALOG.md,
//! "Release routine"). Not run in CI (network).

use std::path::Path;
use std::process::Command;

use noise_filter_core::{Category, Event, Matcher, MatcherPattern, builtin_patterns};

use crate::util::{self, Result};

/// isbot entries deliberately not brought over: generic words or shapes that
/// would fire on ordinary messages or asset URLs (the safety rule in
/// docs/CATALOG.md); the catalog covers their intent with UA-grammar regexes.
const NOT_PORTED: &[&str] = &[
    "(?<!lib)http",
    "(?<!cam)scan",
    "\\.com\\b",
    "\\(\\)",
    "\\|",
    "^[<\\(;]",
    "^\\d+\\b",
    "abuse",
    "advisor",
    "agent\\b",
    "analyzer",
    "archive",
    "audit",
    "capture",
    "catch",
    "check\\b",
    "checker",
    "classifier",
    "crawl",
    "detect",
    "discovery",
    "download",
    "feed",
    "grab",
    "insight",
    "inspect",
    "library",
    "measure",
    "monitor\\b",
    "node\\b",
    "optimize",
    "parser",
    "preview",
    "proxy",
    "radar",
    "retriever",
    "scrape",
    "server",
    "spider",
    "synthetic",
    "tools",
    "torrent",
    "transcoder",
    "url",
    "validator",
];

/// One crawler-user-agents entry: its regex and example user agents.
#[derive(Debug, Clone)]
pub(crate) struct CrawlerEntry {
    pub(crate) pattern: String,
    pub(crate) instances: Vec<String>,
}

/// A catalog pattern as the report needs it.
#[derive(Debug, Clone)]
pub(crate) struct CatalogBot {
    pub(crate) id: String,
    pub(crate) pattern: MatcherPattern,
    pub(crate) source: String,
}

/// What the report lists.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Report {
    /// crawler-user-agents entries with example UAs the catalog does not catch.
    pub(crate) uncaught_entries: Vec<(String, Vec<String>)>,
    /// isbot entries with no corresponding catalog pattern.
    pub(crate) isbot_uncovered: Vec<String>,
    /// Catalog patterns citing an upstream list that nothing upstream matches any more.
    pub(crate) dropped_upstream: Vec<String>,
}

pub(crate) fn run(args: &[String]) -> Result {
    match args.first().map(String::as_str) {
        Some("refresh") => refresh(),
        _ => Err("usage: cargo xtask catalog refresh".into()),
    }
}

fn refresh() -> Result {
    let dir = util::target_dir().join("catalog-refresh");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    util::run(
        Command::new("npm")
            .args(["pack", "isbot", "crawler-user-agents", "--pack-destination"])
            .arg(&dir)
            .current_dir(&dir),
    )?;
    let mut isbot_dir = None;
    let mut cua_dir = None;
    for entry in std::fs::read_dir(&dir).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        let Some(stem) = name.strip_suffix(".tgz") else {
            continue;
        };
        let out = dir.join(stem);
        std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
        util::run(
            Command::new("tar")
                .arg("xzf")
                .arg(&path)
                .arg("-C")
                .arg(&out),
        )?;
        if stem.starts_with("isbot-") {
            isbot_dir = Some((stem.to_owned(), out.join("package")));
        } else if stem.starts_with("crawler-user-agents-") {
            cua_dir = Some((stem.to_owned(), out.join("package")));
        }
    }
    let (isbot_name, isbot_dir) = isbot_dir.ok_or("npm pack gave no isbot package")?;
    let (cua_name, cua_dir) = cua_dir.ok_or("npm pack gave no crawler-user-agents package")?;
    let isbot = read_isbot(&isbot_dir)?;
    let crawlers = read_crawlers(&cua_dir.join("crawler-user-agents.json"))?;

    let matcher = Matcher::builtin(0.5);
    let caught = |ua: &str| {
        matcher
            .classify(&Event {
                user_agent: Some(ua.to_owned()),
                ..Event::default()
            })
            .noise
    };
    let bots: Vec<CatalogBot> = builtin_patterns()
        .iter()
        .filter(|p| p.category == Category::BotTraffic)
        .map(|p| CatalogBot {
            id: p.id.to_owned(),
            pattern: MatcherPattern::from(p),
            source: p.source.to_owned(),
        })
        .collect();
    let report = build_report(&bots, &isbot, &crawlers, caught);
    print_report(&report, &isbot_name, &cua_name, isbot.len(), crawlers.len());
    Ok(())
}

fn read_isbot(dir: &Path) -> Result<Vec<String>> {
    let out = Command::new("node")
        .arg("-e")
        .arg("process.stdout.write(JSON.stringify(require(process.argv[1]).list))")
        .arg(dir.join("index.js"))
        .output()
        .map_err(|e| format!("cannot run node: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "node could not read isbot's list: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("isbot list: {e}"))
}

fn read_crawlers(path: &Path) -> Result<Vec<CrawlerEntry>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let entries = json
        .as_array()
        .ok_or("crawler-user-agents.json is not an array")?;
    Ok(entries
        .iter()
        .filter_map(|e| {
            Some(CrawlerEntry {
                pattern: e.get("pattern")?.as_str()?.to_owned(),
                instances: e
                    .get("instances")
                    .and_then(serde_json::Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|s| s.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
            })
        })
        .collect())
}

/// The longest run of plain characters in a regex: what a catalog pattern for
/// the same fact would contain.
fn literal_core(regex: &str) -> String {
    let cleaned = regex
        .replace("\\b", " ")
        .replace("\\.", ".")
        .replace("\\/", "/")
        .replace("\\-", "-");
    cleaned
        .split(|c: char| {
            !(c.is_alphanumeric() || matches!(c, ' ' | '.' | '_' | '/' | '-' | '!' | '@'))
        })
        .map(str::trim)
        .max_by_key(|s| s.len())
        .unwrap_or("")
        .to_lowercase()
}

/// The report's logic, on data already read (so it is testable offline).
pub(crate) fn build_report(
    bots: &[CatalogBot],
    isbot: &[String],
    crawlers: &[CrawlerEntry],
    caught: impl Fn(&str) -> bool,
) -> Report {
    let mut report = Report::default();
    for entry in crawlers {
        let missed: Vec<String> = entry
            .instances
            .iter()
            .filter(|ua| !caught(ua))
            .cloned()
            .collect();
        if !missed.is_empty() {
            report
                .uncaught_entries
                .push((entry.pattern.clone(), missed));
        }
    }
    let texts: Vec<String> = bots
        .iter()
        .map(|b| b.pattern.pattern.to_lowercase())
        .collect();
    for entry in isbot {
        if NOT_PORTED.contains(&entry.as_str()) {
            continue;
        }
        let core = literal_core(entry);
        let covered = core.len() >= 3 && texts.iter().any(|t| t.replace('\\', "").contains(&core));
        if !covered {
            report.isbot_uncovered.push(entry.clone());
        }
    }
    for bot in bots {
        let cites_cua = bot.source.contains("crawler-user-agents");
        let cites_isbot = bot.source.contains("isbot");
        if !cites_cua && !cites_isbot {
            continue;
        }
        let Ok(one) = Matcher::new([bot.pattern.clone()]) else {
            continue;
        };
        let upstream_cua = cites_cua
            && crawlers.iter().any(|e| {
                one.is_match(&e.pattern.replace('\\', ""))
                    || e.instances.iter().any(|ua| one.is_match(ua))
            });
        let upstream_isbot = cites_isbot && isbot.iter().any(|e| one.is_match(&literal_core(e)));
        if !upstream_cua && !upstream_isbot {
            report.dropped_upstream.push(bot.id.clone());
        }
    }
    report
}

fn print_report(report: &Report, isbot: &str, cua: &str, isbot_len: usize, cua_len: usize) {
    println!(
        "catalog refresh against {isbot} ({isbot_len} entries) and {cua} ({cua_len} entries)\n"
    );
    println!(
        "## crawler-user-agents entries whose example user agents the catalog (minConfidence 0.5) does not catch: {}",
        report.uncaught_entries.len()
    );
    for (pattern, uas) in &report.uncaught_entries {
        println!("- `{pattern}`");
        for ua in uas {
            println!("    {ua}");
        }
    }
    println!(
        "\n## isbot entries with no corresponding catalog pattern: {} ({} generic entries not ported by design are left out)",
        report.isbot_uncovered.len(),
        NOT_PORTED.len()
    );
    for entry in &report.isbot_uncovered {
        println!("- `{entry}`");
    }
    println!(
        "\n## catalog patterns citing isbot / crawler-user-agents that no upstream entry or example matches any more: {}",
        report.dropped_upstream.len()
    );
    for id in &report.dropped_upstream {
        println!("- {id}");
    }
    println!(
        "\nNothing was changed. Review, add patterns with sources, bump `release` (docs/CATALOG.md)."
    );
}

#[cfg(test)]
mod tests {
    use noise_filter_core::Kind;

    use super::*;

    fn bot(id: &str, pattern: &str, kind: Kind, source: &str) -> CatalogBot {
        CatalogBot {
            id: id.into(),
            pattern: MatcherPattern {
                id: id.into(),
                pattern: pattern.into(),
                kind,
                category: "bot-traffic".into(),
                confidence: 0.95,
            },
            source: source.into(),
        }
    }

    #[test]
    fn report_lists_new_upstream_entries_and_dropped_catalog_patterns() {
        let bots = vec![
            bot(
                "googlebot",
                "Googlebot/",
                Kind::String,
                "Google docs; crawler-user-agents",
            ),
            bot(
                "gonebot",
                "GoneBot/",
                Kind::String,
                "crawler-user-agents pattern 'GoneBot'",
            ),
            bot(
                "own-fact",
                "SomeTool/",
                Kind::String,
                "vendor documentation",
            ),
        ];
        let crawlers = vec![
            CrawlerEntry {
                pattern: "Googlebot\\/".into(),
                instances: vec!["Mozilla/5.0 (compatible; Googlebot/2.1)".into()],
            },
            CrawlerEntry {
                pattern: "NewCrawler".into(),
                instances: vec!["NewCrawler 1.0".into()],
            },
        ];
        let isbot = vec![
            "googlebot".to_owned(),
            "^newthing/".to_owned(),
            "crawl".to_owned(),
        ];
        let matcher = Matcher::new(bots.iter().map(|b| b.pattern.clone())).unwrap();
        let report = build_report(&bots, &isbot, &crawlers, |ua| matcher.is_match(ua));
        assert_eq!(
            report,
            Report {
                uncaught_entries: vec![("NewCrawler".into(), vec!["NewCrawler 1.0".into()])],
                isbot_uncovered: vec!["^newthing/".into()],
                dropped_upstream: vec!["gonebot".into()],
            }
        );
    }

    #[test]
    fn literal_core_takes_the_plain_part_of_a_regex() {
        assert_eq!(literal_core("^ad muncher"), "ad muncher");
        assert_eq!(literal_core("mail\\.ru/"), "mail.ru/");
        assert_eq!(literal_core("ptst[ /]\\d"), "ptst");
    }
}
