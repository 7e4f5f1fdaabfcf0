//! The report as one HTML page: styles, script and charts inline, nothing
//! fetched (its Content-Security-Policy forbids any request), every text of
//! the export escaped. Charts are SVG drawn here (hover a bar for its
//! figures); tables sort by a click on a column's head (the page's one
//! script). Its size follows the report's, not the export's: a million
//! events make the same few tables.

use std::fmt::Write as _;

use super::summary::*;
use super::text::{count, percent};

/// Patterns drawn in the chart (all are in the table).
const CHART_PATTERNS: usize = 20;

pub(crate) fn render(s: &Summary) -> String {
    let mut h = String::with_capacity(64 << 10);
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>Noise report: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        esc(&s.input.name)
    );
    header(&mut h, s);
    overview(&mut h, s);
    over_time(&mut h, s);
    categories(&mut h, s);
    patterns(&mut h, s);
    unmatched(&mut h, s);
    candidates(&mut h, s);
    first_party(&mut h, s);
    browsers(&mut h, s);
    silent(&mut h, s);
    input(&mut h, s);
    let _ = write!(h, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    h
}

const STYLE: &str = "
:root{--noise:#c2410c;--clean:#cbd5e1;--ink:#0f172a;--muted:#475569;--line:#e2e8f0}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:var(--ink);margin:0 auto;max-width:1100px;padding:24px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:19px;margin:32px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
.muted{color:var(--muted)}code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:13px;word-break:break-all}
.cards{display:flex;gap:16px;flex-wrap:wrap;margin:16px 0}
.card{border:1px solid var(--line);border-radius:8px;padding:12px 16px;min-width:200px;flex:1}
.card .big{font-size:30px;font-weight:650;color:var(--noise)}
.card .na{font-size:15px;color:var(--muted)}
table{border-collapse:collapse;width:100%;margin:8px 0}
td{overflow-wrap:anywhere}
th,td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.sortable th{cursor:pointer;user-select:none;white-space:nowrap}
table.sortable th::after{content:' \\2195';color:#94a3b8;font-size:11px}
th[aria-sort=ascending]::after{content:' \\2191'!important;color:var(--ink)!important}
th[aria-sort=descending]::after{content:' \\2193'!important;color:var(--ink)!important}
svg{display:block;max-width:100%;height:auto}
svg text{font:12px system-ui,sans-serif;fill:var(--muted)}
.bar-noise{fill:var(--noise)}.bar-all{fill:var(--clean)}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px -1px 12px;border-radius:2px}
details summary{cursor:pointer}
.note{background:#fff7ed;border-left:3px solid var(--noise);padding:6px 10px;margin:8px 0}
";

const SCRIPT: &str = "
document.querySelectorAll('table.sortable').forEach(function(table){
  var heads=table.querySelectorAll('th');
  heads.forEach(function(th,col){
    th.addEventListener('click',function(){
      var numeric=th.classList.contains('n');
      var dir=th.getAttribute('aria-sort')==='descending'?1:-1;
      if(!numeric&&!th.hasAttribute('aria-sort'))dir=1;
      heads.forEach(function(o){o.removeAttribute('aria-sort')});
      th.setAttribute('aria-sort',dir===1?'ascending':'descending');
      var body=table.tBodies[0];
      var rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){
        var x=a.cells[col].getAttribute('data-v'),y=b.cells[col].getAttribute('data-v');
        if(x===null)x=a.cells[col].textContent;if(y===null)y=b.cells[col].textContent;
        if(numeric){x=parseFloat(x);y=parseFloat(y);if(isNaN(x))x=-1;if(isNaN(y))y=-1;return (x-y)*dir;}
        return x.localeCompare(y)*dir;
      });
      rows.forEach(function(r){body.appendChild(r)});
    });
  });
});
";

/// Escapes text for HTML content and attribute values.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `text` escaped, its `backquoted` parts as code.
fn code_spans(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", esc(part));
        } else {
            out.push_str(&esc(part));
        }
    }
    out
}

fn header(h: &mut String, s: &Summary) {
    let _ = writeln!(
        h,
        "<header><h1>Noise report</h1><p class=\"muted\"><code>{}</code> · {} events · \
         patterns: {} ({} at confidence ≥ {})</p></header>",
        esc(&s.input.name),
        count(s.input.events),
        esc(&s.patterns.name),
        count(s.patterns.count as u64),
        s.patterns.min_confidence
    );
    if !s.missing.is_empty() {
        h.push_str("<div class=\"note\"><strong>Not computed:</strong><ul>");
        for why in &s.missing {
            let _ = write!(h, "<li>{}</li>", code_spans(why));
        }
        h.push_str("</ul></div>\n");
    }
}

fn card(h: &mut String, title: &str, share: Option<&Share>, absent: &str) {
    let _ = write!(h, "<div class=\"card\"><div class=\"muted\">{title}</div>");
    match share {
        Some(sh) => {
            let mark = if sh.estimated { "≈" } else { "" };
            let _ = write!(
                h,
                "<div class=\"big\">{}</div><div>{mark}{} of {mark}{} noise</div>",
                percent(sh.noise, sh.total),
                count(sh.noise),
                count(sh.total)
            );
        }
        None => {
            let _ = write!(h, "<div class=\"na\">{}</div>", esc(absent));
        }
    }
    h.push_str("</div>");
}

fn overview(h: &mut String, s: &Summary) {
    h.push_str("<section id=\"overview\"><div class=\"cards\">");
    card(h, "Events", Some(&s.noise.events), "");
    card(h, "Issues", s.noise.issues.as_ref(), "not in the export");
    card(h, "Users", s.noise.users.as_ref(), "not in the export");
    if let Some(t) = &s.time {
        let _ = write!(
            h,
            "<div class=\"card\"><div class=\"muted\">Dropped a month</div>\
             <div class=\"big\">{}</div><div>of {} events a month, at this export's rate \
             ({} days)</div></div>",
            count(t.per_month.noise.round() as u64),
            count(t.per_month.events.round() as u64),
            t.days
        );
    }
    h.push_str("</div><p class=\"muted\">An issue or a user counts as noise when one of its events is.</p></section>\n");
}

fn over_time(h: &mut String, s: &Summary) {
    let Some(t) = &s.time else {
        return;
    };
    let _ = write!(
        h,
        "<section id=\"time\"><h2>Noise over time, by {} (UTC)</h2>\
         <p class=\"legend muted\"><span class=\"bar-all\" style=\"background:var(--clean)\"></span>all events\
         <span style=\"background:var(--noise)\"></span>noise</p>",
        t.bucket
    );
    let (width, height, left, bottom) = (960.0, 240.0, 56.0, 24.0);
    let max = t.series.iter().map(|b| b.events).max().unwrap_or(0).max(1) as f64;
    let n = t.series.len().max(1) as f64;
    let plot = width - left - 8.0;
    let step = plot / n;
    let bar = (step * 0.8).max(1.0);
    let scale = (height - bottom - 8.0) / max;
    let _ = write!(
        h,
        "<svg id=\"chart-time\" viewBox=\"0 0 {width} {height}\" role=\"img\" \
         aria-label=\"Events and noise per {}\">",
        t.bucket
    );
    let _ = write!(
        h,
        "<text x=\"{}\" y=\"14\" text-anchor=\"end\">{}</text>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\">0</text>",
        left - 6.0,
        count(max as u64),
        left - 6.0,
        height - bottom
    );
    for (i, b) in t.series.iter().enumerate() {
        let x = left + i as f64 * step + (step - bar) / 2.0;
        let all = b.events as f64 * scale;
        let noise = b.noise as f64 * scale;
        let base = height - bottom;
        let _ = write!(
            h,
            "<g><title>{}: {} of {} events noise ({})</title>\
             <rect class=\"bar-all\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{bar:.1}\" height=\"{all:.1}\"/>\
             <rect class=\"bar-noise\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{bar:.1}\" height=\"{noise:.1}\"/></g>",
            b.start,
            count(b.noise),
            count(b.events),
            percent(b.noise, b.events),
            base - all,
            base - noise
        );
    }
    if let (Some(first), Some(last)) = (t.series.first(), t.series.last()) {
        let _ = write!(
            h,
            "<text x=\"{left}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            height - 6.0,
            first.start,
            width - 8.0,
            height - 6.0,
            last.start
        );
    }
    h.push_str("</svg>");
    h.push_str("<table class=\"sortable\"><thead><tr><th>from</th><th class=\"n\">noise</th><th class=\"n\">events</th><th class=\"n\">share</th></tr></thead><tbody>");
    for b in &t.months {
        share_row(h, &b.start[..7], b.noise, b.events);
    }
    h.push_str("</tbody></table><p class=\"muted\">Per calendar month.</p></section>\n");
}

fn share_row(h: &mut String, label: &str, noise: u64, events: u64) {
    let fraction = if events == 0 {
        0.0
    } else {
        noise as f64 / events as f64
    };
    let _ = write!(
        h,
        "<tr><td>{}</td><td class=\"n\" data-v=\"{noise}\">{}</td><td class=\"n\" data-v=\"{events}\">{}</td>\
         <td class=\"n\" data-v=\"{fraction:.6}\">{}</td></tr>",
        esc(label),
        count(noise),
        count(events),
        percent(noise, events)
    );
}

/// Horizontal bars: `(label, value)` against `total`.
fn bars(h: &mut String, id: &str, rows: &[(String, u64)], total: u64) {
    let (width, row, label) = (960.0, 22.0, 300.0);
    let height = row * rows.len() as f64 + 4.0;
    let max = rows.iter().map(|r| r.1).max().unwrap_or(0).max(1) as f64;
    let scale = (width - label - 120.0) / max;
    let _ = write!(
        h,
        "<svg id=\"{id}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"Events per row\">"
    );
    for (i, (name, value)) in rows.iter().enumerate() {
        let y = i as f64 * row + 2.0;
        let w = (*value as f64 * scale).max(1.0);
        let _ = write!(
            h,
            "<g><title>{}: {} events ({} of all)</title>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <rect class=\"bar-noise\" x=\"{label}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
            esc(name),
            count(*value),
            percent(*value, total),
            label - 8.0,
            y + 14.0,
            esc(&short(name, 40)),
            row - 6.0,
            label + w + 6.0,
            y + 14.0,
            count(*value)
        );
    }
    h.push_str("</svg>");
}

fn short(text: &str, most: usize) -> String {
    super::text::fit(text, most)
}

fn opt(v: Option<u64>, estimated: bool) -> (String, String) {
    match v {
        Some(n) => (
            n.to_string(),
            if estimated {
                format!("≈{}", count(n))
            } else {
                count(n)
            },
        ),
        None => ("-1".to_owned(), "-".to_owned()),
    }
}

fn categories(h: &mut String, s: &Summary) {
    if s.categories.is_empty() {
        return;
    }
    h.push_str("<section id=\"categories\"><h2>By category</h2>");
    let rows: Vec<(String, u64)> = s
        .categories
        .iter()
        .map(|c| (c.category.clone(), c.events))
        .collect();
    bars(h, "chart-categories", &rows, s.input.events);
    h.push_str(
        "<table class=\"sortable\"><thead><tr><th>category</th><th class=\"n\">events</th>\
                <th class=\"n\">share</th><th class=\"n\">issues</th><th class=\"n\">users</th>\
                <th class=\"n\">patterns</th></tr></thead><tbody>",
    );
    for c in &s.categories {
        let (iv, it) = opt(c.issues, c.estimated);
        let (uv, ut) = opt(c.users, c.estimated);
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"n\" data-v=\"{}\">{}</td><td class=\"n\" data-v=\"{}\">{}</td>\
             <td class=\"n\" data-v=\"{iv}\">{it}</td><td class=\"n\" data-v=\"{uv}\">{ut}</td>\
             <td class=\"n\" data-v=\"{}\">{}</td></tr>",
            esc(&c.category),
            c.events,
            count(c.events),
            c.events,
            percent(c.events, s.input.events),
            c.patterns,
            c.patterns
        );
    }
    h.push_str("</tbody></table><p class=\"muted\">An event matched in two categories counts in both.</p></section>\n");
}

fn patterns(h: &mut String, s: &Summary) {
    if s.matched.is_empty() {
        return;
    }
    let _ = write!(
        h,
        "<section id=\"patterns\"><h2>Patterns that matched ({} of {})</h2>",
        count(s.matched.len() as u64),
        count((s.matched.len() + s.silent.len()) as u64)
    );
    let rows: Vec<(String, u64)> = s
        .matched
        .iter()
        .take(CHART_PATTERNS)
        .map(|p| (p.id.clone(), p.events))
        .collect();
    bars(h, "chart-patterns", &rows, s.input.events);
    h.push_str(
        "<table class=\"sortable\" id=\"table-patterns\"><thead><tr><th>pattern</th><th>category</th>\
         <th class=\"n\">events</th><th class=\"n\">only it</th><th class=\"n\">issues</th>\
         <th class=\"n\">users</th><th>first seen</th><th>last seen</th><th>matched on</th></tr></thead><tbody>",
    );
    for p in &s.matched {
        let (iv, it) = opt(p.issues, p.estimated);
        let (uv, ut) = opt(p.users, p.estimated);
        let kind = if p.kind == "regex" { "re:" } else { "" };
        let mut on = Vec::new();
        for (n, what) in [
            (p.fields.message, "message"),
            (p.fields.frame, "frame"),
            (p.fields.user_agent, "user agent"),
        ] {
            if n > 0 {
                on.push(format!("{what} {}", count(n)));
            }
        }
        let _ = write!(
            h,
            "<tr><td><strong>{}</strong><br><code>{kind}{}</code></td><td>{}</td>\
             <td class=\"n\" data-v=\"{}\">{}</td><td class=\"n\" data-v=\"{}\">{}</td>\
             <td class=\"n\" data-v=\"{iv}\">{it}</td><td class=\"n\" data-v=\"{uv}\">{ut}</td>\
             <td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&p.id),
            esc(&p.pattern),
            esc(&p.category),
            p.events,
            count(p.events),
            p.only,
            count(p.only),
            p.first_seen.as_deref().map_or("-", |t| &t[..10]),
            p.last_seen.as_deref().map_or("-", |t| &t[..10]),
            on.join(", ")
        );
    }
    h.push_str("</tbody></table></section>\n");
}

fn unmatched(h: &mut String, s: &Summary) {
    let u = &s.unmatched;
    if u.events == 0 {
        return;
    }
    let _ = write!(
        h,
        "<section id=\"unmatched\"><h2>Top unmatched messages</h2><p>{} events no pattern \
         matched, {} distinct messages once numbers, ids, hashes, URLs and quoted values are \
         folded.</p>",
        count(u.events),
        count(u.messages)
    );
    if u.untracked_events > 0 {
        let _ = write!(
            h,
            "<p class=\"note\">The table of messages filled: {} events of rare messages were \
             dropped, and a count may be short by up to {}.</p>",
            count(u.untracked_events),
            count(u.max_undercount)
        );
    }
    h.push_str(
        "<table class=\"sortable\" id=\"table-unmatched\"><thead><tr><th class=\"n\">rank</th><th>message</th>\
         <th class=\"n\">events</th><th class=\"n\">users</th><th>suggested pattern</th>\
         <th class=\"n\">it would add</th></tr></thead><tbody>",
    );
    for m in &u.top {
        let (uv, ut) = opt(m.users, m.estimated);
        let message = if m.message.is_empty() {
            "(no message)"
        } else {
            &m.message
        };
        let (pattern, adds, adds_v) = match &m.suggestion {
            Some(sg) => {
                let kind = if sg.kind == "regex" { "re:" } else { "" };
                (
                    format!("<code>{kind}{}</code>", esc(&sg.pattern)),
                    format!(
                        "{} events{}<br><span class=\"muted\">{} already noise</span>",
                        count(sg.adds),
                        sg.users.map_or(String::new(), |u| format!(
                            ", {}{} users",
                            if sg.estimated { "≈" } else { "" },
                            count(u)
                        )),
                        count(sg.already_noise)
                    ),
                    sg.adds.to_string(),
                )
            }
            None => (
                "<span class=\"muted\">none</span>".to_owned(),
                "-".to_owned(),
                "-1".to_owned(),
            ),
        };
        let _ = write!(
            h,
            "<tr><td class=\"n\" data-v=\"{}\">{}</td><td><span class=\"mono\">{}</span><br>\
             <span class=\"muted\">e.g. {}</span></td><td class=\"n\" data-v=\"{}\">{}</td>\
             <td class=\"n\" data-v=\"{uv}\">{ut}</td><td>{pattern}</td>\
             <td class=\"n\" data-v=\"{adds_v}\">{adds}</td></tr>",
            m.rank,
            m.rank,
            esc(message),
            esc(&m.sample),
            m.events,
            count(m.events)
        );
    }
    h.push_str("</tbody></table><p class=\"muted\">Keep a suggestion: <code>--accept RANKS --emit patterns</code>, then <code>noise-filter patterns import</code>.</p></section>\n");
}

fn samples(h: &mut String, samples: &[Sample]) {
    if samples.is_empty() {
        return;
    }
    h.push_str("<ul>");
    for sm in samples {
        let _ = write!(h, "<li>line {}", sm.line);
        if let Some(id) = &sm.id {
            let _ = write!(h, " (<code>{}</code>)", esc(id));
        }
        let _ = write!(h, ": {}", esc(sm.message.as_deref().unwrap_or("")));
        if sm.field != "message" {
            let _ = write!(
                h,
                " <span class=\"muted\">{}: <code>{}</code></span>",
                sm.field,
                esc(&sm.text)
            );
        }
        h.push_str("</li>");
    }
    h.push_str("</ul>");
}

fn candidates(h: &mut String, s: &Summary) {
    if s.candidates.is_empty() {
        return;
    }
    h.push_str("<section id=\"candidates\"><h2>Candidate patterns</h2>");
    for c in &s.candidates {
        let _ = write!(
            h,
            "<h3><code>{}</code></h3><p>Matches {} events; adds {} the list does not match",
            esc(&c.given),
            count(c.events),
            count(c.adds)
        );
        if let Some(u) = c.users {
            let _ = write!(
                h,
                " ({}{} users)",
                if c.estimated { "≈" } else { "" },
                count(u)
            );
        }
        h.push_str(".</p>");
        samples(h, &c.samples);
    }
    h.push_str("</section>\n");
}

fn first_party(h: &mut String, s: &Summary) {
    let Some(fp) = &s.first_party else {
        return;
    };
    let _ = write!(
        h,
        "<section id=\"first-party\"><h2>Suspected false positives</h2><p>{} noise events have \
         every frame under {} (of {} events with frames).</p>",
        count(fp.events),
        esc(&fp.origins.join(", ")),
        count(fp.judged)
    );
    let rows: Vec<&PatternRow> = s.matched.iter().filter(|p| p.first_party > 0).collect();
    if !rows.is_empty() {
        h.push_str("<table class=\"sortable\"><thead><tr><th>pattern</th><th class=\"n\">first-party events</th><th class=\"n\">all its events</th></tr></thead><tbody>");
        for p in rows {
            let _ = write!(
                h,
                "<tr><td>{}</td><td class=\"n\" data-v=\"{}\">{}</td><td class=\"n\" data-v=\"{}\">{}</td></tr>",
                esc(&p.id),
                p.first_party,
                count(p.first_party),
                p.events,
                count(p.events)
            );
        }
        h.push_str("</tbody></table>");
    }
    samples(h, &fp.samples);
    h.push_str("</section>\n");
}

fn browsers(h: &mut String, s: &Summary) {
    let Some(rows) = &s.browsers else {
        return;
    };
    h.push_str("<section id=\"browsers\"><h2>By browser</h2><table class=\"sortable\"><thead><tr><th>browser</th><th class=\"n\">noise</th><th class=\"n\">events</th><th class=\"n\">share</th></tr></thead><tbody>");
    for b in rows.iter().take(100) {
        share_row(h, &b.browser, b.noise, b.events);
    }
    h.push_str("</tbody></table></section>\n");
}

fn silent(h: &mut String, s: &Summary) {
    if s.silent.is_empty() {
        return;
    }
    let _ = write!(
        h,
        "<section id=\"silent\"><h2>Patterns that matched nothing</h2><details><summary>{} patterns</summary>\
         <table class=\"sortable\"><thead><tr><th>pattern</th><th>category</th></tr></thead><tbody>",
        count(s.silent.len() as u64)
    );
    for p in &s.silent {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td></tr>",
            esc(&p.id),
            esc(&p.category)
        );
    }
    h.push_str("</tbody></table></details></section>\n");
}

fn input(h: &mut String, s: &Summary) {
    let i = &s.input;
    let _ = write!(
        h,
        "<section id=\"input\"><h2>What was read</h2><p>{} bytes; {} records read as {} events",
        count(i.bytes),
        count(i.records),
        count(i.events)
    );
    for shape in &i.shapes {
        let _ = write!(h, "; {} {}", count(shape.records), shape.shape);
    }
    h.push_str(".</p>");
    for skip in &i.skipped {
        let _ = write!(
            h,
            "<p>Skipped {}: {}.</p>",
            count(skip.count),
            esc(&skip.why)
        );
    }
    if i.malformed > 0 {
        let _ = write!(h, "<p>{} malformed records:</p><ul>", count(i.malformed));
        for m in &i.malformed_first {
            let _ = write!(h, "<li>line {}: {}</li>", m.line, esc(&m.why));
        }
        h.push_str("</ul>");
    }
    if let Some(columns) = &i.columns {
        h.push_str("<p>Columns: ");
        for (n, c) in columns.iter().enumerate() {
            if n > 0 {
                h.push_str(", ");
            }
            if c.read {
                let _ = write!(h, "<code>{}</code>", esc(&c.name));
            } else {
                let _ = write!(
                    h,
                    "<code class=\"muted\">{}</code> (not read)",
                    esc(&c.name)
                );
            }
        }
        h.push_str(".</p>");
    }
    h.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_every_text() {
        assert_eq!(
            esc("<script>alert('x')</script>&\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"
        );
    }
}
