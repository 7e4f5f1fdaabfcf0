//! A Discover CSV export read into events (docs/REPORT.md, "Inputs").
//!
//! Sentry writes a Discover export with Python's `csv.DictWriter`: a header
//! of the query's field names (`count()` as `count`), rows of RFC 4180
//! fields (quoted when they hold a comma, a quote or a line break; quotes
//! doubled), lists in Python's spelling (`['TypeError']`). The report reads
//! the columns it knows, whichever the query had, and says which it used.

use std::borrow::Cow;

use super::read::EventRecord;
use super::time;

/// Where each column the report reads is, in a header.
#[derive(Debug, Default, Clone)]
pub(crate) struct Columns {
    count: usize,
    title: Option<usize>,
    message: Option<usize>,
    error_type: Option<usize>,
    error_value: Option<usize>,
    frames: Option<usize>,
    user_agent: Option<usize>,
    timestamp: Option<usize>,
    issue: Option<usize>,
    user: Option<(usize, &'static str)>,
    browser: Option<usize>,
    url: Option<usize>,
    id: Option<usize>,
    weight: Option<usize>,
    /// The header's names, for the summary: (name, read).
    pub names: Vec<(String, bool)>,
}

/// A CSV header that names nothing the report reads as a message.
pub(crate) fn no_message_column(names: &[String]) -> String {
    let mut listed = names
        .iter()
        .take(12)
        .map(|n| format!("`{}`", cut(n, 40)))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > 12 {
        listed.push_str(", …");
    }
    format!("text whose first line, read as a CSV header, names {listed}")
}

fn cut(text: &str, most: usize) -> &str {
    text.char_indices()
        .nth(most)
        .map_or(text, |(i, _)| &text[..i])
}

impl Columns {
    /// The columns of a header row; `Err` with the names when none is a
    /// message column.
    pub(crate) fn of(header: &[u8]) -> Result<Columns, Vec<String>> {
        let names: Vec<String> = fields(header)
            .into_iter()
            .map(|f| f.trim().to_owned())
            .collect();
        let mut c = Columns {
            count: names.len(),
            ..Columns::default()
        };
        let find = |wanted: &[&str]| {
            wanted
                .iter()
                .find_map(|w| names.iter().position(|n| n.eq_ignore_ascii_case(w)))
        };
        c.title = find(&["title"]);
        c.message = find(&["message"]);
        c.error_type = find(&["error.type"]);
        c.error_value = find(&["error.value"]);
        c.frames = find(&["stack.abs_path"]).or_else(|| find(&["stack.filename"]));
        c.user_agent = find(&["user_agent", "http.user_agent", "user-agent"]);
        c.timestamp = find(&["timestamp"]);
        c.issue = find(&["issue"]).or_else(|| find(&["issue.id"]));
        c.user = find(&["user"]).map(|i| (i, ""));
        for (column, prefix) in [
            ("user.id", "id:"),
            ("user.email", "email:"),
            ("user.username", "username:"),
            ("user.ip", "ip:"),
            ("user.display", ""),
        ] {
            if c.user.is_none() {
                c.user = find(&[column]).map(|i| (i, prefix));
            }
        }
        c.browser = find(&["browser.name"]).or_else(|| find(&["browser"]));
        c.url = find(&["url"]).or_else(|| find(&["http.url"]));
        c.id = find(&["id"]);
        c.weight = find(&["count", "count()"]);
        if c.title.is_none() && c.message.is_none() && c.error_value.is_none() {
            return Err(names);
        }
        let used: Vec<usize> = [
            c.title,
            c.message,
            c.error_type,
            c.error_value,
            c.frames,
            c.user_agent,
            c.timestamp,
            c.issue,
            c.user.map(|u| u.0),
            c.browser,
            c.url,
            c.id,
            c.weight,
        ]
        .into_iter()
        .flatten()
        .collect();
        c.names = names
            .into_iter()
            .enumerate()
            .map(|(i, n)| (n, used.contains(&i)))
            .collect();
        Ok(c)
    }

    /// Reads a row; `Err` says why it is malformed.
    pub(crate) fn row<'r>(&self, bytes: &'r [u8]) -> Result<Option<EventRecord<'r>>, String> {
        let row = fields(bytes);
        if row.len() != self.count {
            return Err(format!(
                "{} fields where the header has {}",
                row.len(),
                self.count
            ));
        }
        let get = |i: Option<usize>| -> Option<Cow<'r, str>> {
            i.map(|i| row[i].clone()).filter(|v| !v.is_empty())
        };
        let weight = match get(self.weight) {
            None => 1,
            Some(text) => match text.trim().parse::<u64>() {
                Ok(0) => return Ok(None),
                Ok(n) => n,
                Err(_) => return Err(format!("count {:?} is not a whole number", cut(&text, 20))),
            },
        };
        let (mut exception_type, mut message) = (None, None);
        if let Some(value) = get(self.error_value).and_then(|v| last(&v)) {
            exception_type = get(self.error_type).and_then(|t| last(&t)).map(Cow::Owned);
            message = Some(Cow::Owned(value));
        }
        if message.is_none() {
            message = get(self.title).or_else(|| get(self.message));
        }
        let frames = get(self.frames)
            .map(|f| {
                list(&f)
                    .into_iter()
                    .filter(|u| !u.is_empty())
                    .map(Cow::Owned)
                    .collect()
            })
            .unwrap_or_default();
        let time = match get(self.timestamp) {
            None => None,
            Some(text) => match time::parse(&text) {
                Some(t) => Some(t),
                None => {
                    return Err(format!(
                        "timestamp {:?} is neither RFC 3339 nor Unix seconds",
                        cut(&text, 40)
                    ));
                }
            },
        };
        let user = self
            .user
            .and_then(|(i, prefix)| get(Some(i)).map(|u| format!("{prefix}{u}")));
        Ok(Some(EventRecord {
            exception_type,
            message,
            frames,
            user_agent: get(self.user_agent),
            raw_frames: Vec::new(),
            time,
            issue: get(self.issue),
            user,
            browser: get(self.browser),
            url: get(self.url),
            id: get(self.id),
            weight,
        }))
    }
}

/// The fields of one CSV row (RFC 4180; a quote inside an unquoted field is
/// kept as it is).
pub(crate) fn fields(row: &[u8]) -> Vec<Cow<'_, str>> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        if row.get(i) == Some(&b'"') {
            let mut value = Vec::new();
            i += 1;
            while i < row.len() {
                if row[i] == b'"' {
                    if row.get(i + 1) == Some(&b'"') {
                        value.push(b'"');
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                value.push(row[i]);
                i += 1;
            }
            // Anything between the closing quote and the comma is kept.
            while i < row.len() && row[i] != b',' {
                value.push(row[i]);
                i += 1;
            }
            out.push(Cow::Owned(String::from_utf8_lossy(&value).into_owned()));
        } else {
            let end = row[i..]
                .iter()
                .position(|&b| b == b',')
                .map_or(row.len(), |p| i + p);
            out.push(String::from_utf8_lossy(&row[i..end]));
            i = end;
        }
        if i >= row.len() {
            break;
        }
        // The comma.
        i += 1;
        if i == row.len() {
            out.push(Cow::Borrowed(""));
            break;
        }
    }
    out
}

/// The items of a list cell: Python's spelling (`['a', "b's"]`) or JSON's;
/// any other text is one item.
pub(crate) fn list(cell: &str) -> Vec<String> {
    let trimmed = cell.trim();
    if !(trimmed.starts_with('[') && trimmed.ends_with(']')) {
        return vec![cell.to_owned()];
    }
    parse_list(&trimmed[1..trimmed.len() - 1]).unwrap_or_else(|| vec![cell.to_owned()])
}

/// The last item of a list cell (the thrown exception of a chain).
fn last(cell: &str) -> Option<String> {
    list(cell).pop()
}

fn parse_list(inner: &str) -> Option<Vec<String>> {
    let mut items = Vec::new();
    let mut chars = inner.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(quote) = chars.next() else {
            return Some(items);
        };
        if quote != '\'' && quote != '"' {
            return None;
        }
        let mut item = String::new();
        loop {
            match chars.next()? {
                '\\' => {
                    let escaped = chars.next()?;
                    match escaped {
                        'n' => item.push('\n'),
                        't' => item.push('\t'),
                        'r' => item.push('\r'),
                        'x' | 'u' | 'U' => {
                            let len = match escaped {
                                'x' => 2,
                                'u' => 4,
                                _ => 8,
                            };
                            let hex: String = (0..len).filter_map(|_| chars.next()).collect();
                            let code = u32::from_str_radix(&hex, 16).ok()?;
                            item.push(char::from_u32(code)?);
                        }
                        other => item.push(other),
                    }
                }
                c if c == quote => break,
                c => item.push(c),
            }
        }
        items.push(item);
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.next() {
            None => return Some(items),
            Some(',') => {}
            Some(_) => return None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn rows_split_as_rfc_4180_says() {
        assert_eq!(
            fields(b"a,\"b,c\",\"d \"\"e\"\"\","),
            ["a", "b,c", "d \"e\"", ""]
        );
        assert_eq!(fields(b""), [""]);
        assert_eq!(fields(b"x\"y,z"), ["x\"y", "z"]);
    }

    #[test]
    fn list_cells_in_python_or_json_spelling() {
        assert_eq!(list("['TypeError', \"it's\"]"), ["TypeError", "it's"]);
        assert_eq!(list(r#"["a\u00e9", "b"]"#), ["aé", "b"]);
        assert_eq!(list("[]"), Vec::<String>::new());
        assert_eq!(list("plain"), ["plain"]);
        assert_eq!(list("[not a list"), ["[not a list"]);
    }

    #[test]
    fn columns_the_report_reads() {
        let c = Columns::of(b"title,timestamp,issue,user.display,count,project").unwrap();
        let row = c
            .row(b"TypeError: x,2020-06-17T22:26:56+00:00,JAVASCRIPT-2K,jane@example.com,3,web")
            .unwrap()
            .unwrap();
        assert_eq!(row.message.as_deref(), Some("TypeError: x"));
        assert_eq!(row.issue.as_deref(), Some("JAVASCRIPT-2K"));
        assert_eq!(row.user.as_deref(), Some("jane@example.com"));
        assert_eq!(row.weight, 3);
        assert_eq!(
            c.names
                .iter()
                .filter(|(_, used)| !used)
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>(),
            ["project"]
        );
        assert!(c.row(b"only,two").unwrap_err().contains("2 fields"));
        assert!(
            c.row(b"t,not a time,i,u,1,p")
                .unwrap_err()
                .contains("timestamp")
        );
        assert!(Columns::of(b"project,count").is_err());
        let errors = Columns::of(b"error.type,error.value,stack.abs_path").unwrap();
        let row = errors
            .row(b"\"['Error', 'TypeError']\",\"['cause', 'boom']\",\"['https://a/x.js', 'chrome-extension://e/y.js']\"")
            .unwrap()
            .unwrap();
        assert_eq!(row.exception_type.as_deref(), Some("TypeError"));
        assert_eq!(row.message.as_deref(), Some("boom"));
        assert_eq!(row.frames, ["https://a/x.js", "chrome-extension://e/y.js"]);
    }
}
