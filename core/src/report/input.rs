//! An export cut into records as its bytes arrive, in any size of chunk.
//!
//! The format is told from the first bytes (docs/REPORT.md, "Inputs"):
//! `[` a JSON array of events (one or several arrays one after another, as
//! pages of the API appended), `{` JSON objects one after another (JSON
//! lines, or pretty-printed objects such as Sentry's per-event JSON), any
//! other text a CSV file whose header names a column the report reads.
//! Anything else is refused with what was expected.
//!
//! Records are found by their structure (brackets outside strings), not
//! by lines, so a one-line API response of any length is read a record at
//! a time. A record that cannot be cut out cleanly is reported with its
//! line and the reading goes on: in JSON lines from the next line, in a
//! pretty-printed file or an array from the next line that opens an
//! object. Memory: one record (at most [`MAX_RECORD_BYTES`]) at a time.

/// The largest record kept; a larger one is reported and skipped.
pub(crate) const MAX_RECORD_BYTES: usize = 16 << 20;
/// The longest CSV header read.
const MAX_HEADER_BYTES: usize = 64 << 10;

/// What the splitter found.
pub(crate) enum Found<'b> {
    /// A JSON value, which starts on `line`.
    Json { bytes: &'b [u8], line: u64 },
    /// The CSV header row.
    CsvHeader { bytes: &'b [u8] },
    /// A CSV row (without its line break), which starts on `line`.
    CsvRow { bytes: &'b [u8], line: u64 },
    /// A record that could not be cut out, on `line`.
    Broken { line: u64, why: &'static str },
}

/// The input's format is none the report reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnknownFormat(pub String);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Nothing but blanks seen yet.
    Start,
    Json,
    /// The CSV header is being read.
    CsvHeader,
    Csv,
    /// Refused: everything after is ignored.
    Refused,
}

/// How JSON records follow each other, once known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// Not known yet (no record ended).
    Unknown,
    /// Each record on a line of its own: a line break ends any record.
    Lines,
    /// Records over several lines.
    Pretty,
}

#[derive(Debug)]
pub(crate) struct Splitter {
    mode: Mode,
    layout: Layout,
    /// The line of the next byte.
    line: u64,
    /// The current record's bytes (or the CSV header's).
    record: Vec<u8>,
    record_line: u64,
    in_record: bool,
    /// The record grew past the bound: its bytes are no longer kept.
    oversized: bool,
    /// Brackets open: of enclosing arrays (outside a record) and inside it.
    depth: u32,
    /// The depth at which the current record started.
    base: u32,
    in_string: bool,
    escaped: bool,
    /// The current record is a scalar (not an object or array).
    scalar: bool,
    /// After a broken record: skipping to the next line that opens an object.
    resync: Resync,
    /// CSV: inside a quoted field, opened on this line.
    quote_line: Option<u64>,
    /// Bytes of a UTF-8 byte order mark skipped at the start.
    bom: u8,
    bytes: u64,
}

/// Why [`Splitter::scan_inside`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    ChunkEnd,
    /// The record's closing bracket.
    End,
    /// A line break outside strings.
    LineBreak,
    /// A line break inside a string: JSON has none there.
    LineBreakInString,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resync {
    No,
    /// Skip to the end of this line.
    ToLineEnd,
    /// At a line's start: blanks, then `{` begins a record again.
    LineStart,
}

impl Splitter {
    pub(crate) fn new() -> Splitter {
        Splitter {
            mode: Mode::Start,
            layout: Layout::Unknown,
            line: 1,
            record: Vec::new(),
            record_line: 1,
            in_record: false,
            oversized: false,
            depth: 0,
            base: 0,
            in_string: false,
            escaped: false,
            scalar: false,
            resync: Resync::No,
            quote_line: None,
            bom: 0,
            bytes: 0,
        }
    }

    /// Bytes fed so far.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Cuts `chunk`, calling `found` for each record completed.
    pub(crate) fn feed(
        &mut self,
        chunk: &[u8],
        found: &mut dyn FnMut(Found<'_>),
    ) -> Result<(), UnknownFormat> {
        self.bytes += chunk.len() as u64;
        let mut i = 0;
        while i < chunk.len() {
            match self.mode {
                Mode::Start => {
                    i = self.start(chunk, i)?;
                }
                Mode::Json => {
                    i = self.json(chunk, i, found);
                }
                Mode::CsvHeader => {
                    i = self.csv_header(chunk, i, found)?;
                }
                Mode::Csv => {
                    i = self.csv(chunk, i, found);
                }
                Mode::Refused => return Ok(()),
            }
        }
        Ok(())
    }

    /// The end of the input: completes or reports the last record.
    pub(crate) fn finish(&mut self, found: &mut dyn FnMut(Found<'_>)) -> Result<(), UnknownFormat> {
        match self.mode {
            Mode::Start => Err(UnknownFormat(
                "the input is empty: expected an export of events".into(),
            )),
            Mode::Json => {
                if self.in_record {
                    if self.scalar && !self.in_string {
                        self.end_record(found, None);
                    } else {
                        let line = self.record_line;
                        self.drop_record();
                        found(Found::Broken {
                            line,
                            why: "the input ends inside this record (a truncated file?)",
                        });
                    }
                }
                Ok(())
            }
            Mode::CsvHeader => {
                let header = std::mem::take(&mut self.record);
                found(Found::CsvHeader { bytes: &header });
                Ok(())
            }
            Mode::Csv => {
                if let Some(line) = self.quote_line {
                    self.drop_record();
                    found(Found::Broken {
                        line,
                        why: "a quoted field opened on this line never closes",
                    });
                } else if self.in_record {
                    self.end_csv_row(found);
                }
                Ok(())
            }
            Mode::Refused => Ok(()),
        }
    }

    /// Skips blanks (and a byte order mark) to the first byte, which tells
    /// the format.
    fn start(&mut self, chunk: &[u8], mut i: usize) -> Result<usize, UnknownFormat> {
        while i < chunk.len() {
            let b = chunk[i];
            // The UTF-8 byte order mark EF BB BF, before anything else.
            let at = self.bytes - chunk.len() as u64 + i as u64;
            if at < 3 && at == u64::from(self.bom) && b == [0xEF, 0xBB, 0xBF][at as usize] {
                self.bom += 1;
                i += 1;
                continue;
            }
            match b {
                b'\n' => {
                    self.line += 1;
                    i += 1;
                }
                b' ' | b'\t' | b'\r' => i += 1,
                b'[' | b'{' => {
                    self.mode = Mode::Json;
                    return Ok(i);
                }
                0x1f if chunk.get(i + 1) == Some(&0x8b) => {
                    self.mode = Mode::Refused;
                    return Err(UnknownFormat(
                        "the input is gzip-compressed: give the file itself (the command \
                         decompresses .gz files) or decompress it first"
                            .into(),
                    ));
                }
                b if b < 0x20 || b == 0x7f => {
                    self.mode = Mode::Refused;
                    return Err(unknown(
                        "binary data (a control byte before any text)".to_owned(),
                    ));
                }
                _ => {
                    self.mode = Mode::CsvHeader;
                    self.record_line = self.line;
                    return Ok(i);
                }
            }
        }
        Ok(i)
    }

    fn json(&mut self, chunk: &[u8], mut i: usize, found: &mut dyn FnMut(Found<'_>)) -> usize {
        // Bytes of the current record from `from` are appended in one copy.
        let mut from = if self.in_record { Some(i) } else { None };
        macro_rules! keep {
            ($to:expr) => {
                if let Some(f) = from.take() {
                    self.keep(&chunk[f..$to]);
                }
            };
        }
        // Ends the current record at `to`: a record wholly inside this
        // chunk is handed over where it lies, without a copy.
        macro_rules! end_at {
            ($to:expr) => {{
                let to = $to;
                match from.take() {
                    Some(f) if self.record.is_empty() && !self.oversized => {
                        self.end_record(found, Some(&chunk[f..to]));
                    }
                    other => {
                        if let Some(f) = other {
                            self.keep(&chunk[f..to]);
                        }
                        self.end_record(found, None);
                    }
                }
            }};
        }
        while i < chunk.len() {
            let b = chunk[i];
            if self.resync != Resync::No {
                match (self.resync, b) {
                    (_, b'\n') => {
                        self.line += 1;
                        self.resync = Resync::LineStart;
                    }
                    (Resync::LineStart, b' ' | b'\t' | b'\r') => {}
                    (Resync::LineStart, b'{') => {
                        self.resync = Resync::No;
                        continue;
                    }
                    (Resync::LineStart, b']') if self.depth == 1 && self.base == 1 => {
                        self.resync = Resync::No;
                        continue;
                    }
                    (Resync::LineStart, _) if self.layout == Layout::Lines => {
                        self.resync = Resync::No;
                        continue;
                    }
                    _ => self.resync = Resync::ToLineEnd,
                }
                i += 1;
                continue;
            }
            if !self.in_record {
                match b {
                    b'\n' => self.line += 1,
                    b' ' | b'\t' | b'\r' => {}
                    b',' if self.depth == 1 => {}
                    b'[' if self.depth == 0 => self.depth = 1,
                    b']' if self.depth == 1 => self.depth = 0,
                    b'{' if self.depth == 0 => {
                        self.begin_record(b);
                        from = Some(i);
                    }
                    // Between objects, something that opens none: this
                    // line is no record; the next one may be.
                    _ if self.depth == 0 => {
                        self.record_line = self.line;
                        self.broken(found, "not JSON: a line that opens no object");
                        self.resync = Resync::ToLineEnd;
                    }
                    _ => {
                        self.begin_record(b);
                        from = Some(i);
                    }
                }
                i += 1;
                continue;
            }
            if !self.scalar {
                // An object or array: its bytes, fast.
                let (at, stop) = self.scan_inside(chunk, i);
                match stop {
                    Stop::ChunkEnd => i = at,
                    Stop::End => {
                        if self.layout == Layout::Unknown && self.base == 0 {
                            self.layout = if self.line == self.record_line {
                                Layout::Lines
                            } else {
                                Layout::Pretty
                            };
                        }
                        end_at!(at);
                        i = at;
                    }
                    Stop::LineBreak => {
                        if self.layout == Layout::Lines && self.base == 0 {
                            keep!(at);
                            self.broken(
                                found,
                                "the line ends inside this record (a truncated line?)",
                            );
                            self.resync = Resync::LineStart;
                        }
                        self.line += 1;
                        i = at + 1;
                    }
                    Stop::LineBreakInString => {
                        keep!(at);
                        self.broken(found, "a line break inside a string (a truncated record?)");
                        self.line += 1;
                        self.resync = Resync::LineStart;
                        i = at + 1;
                    }
                }
                continue;
            }
            // A scalar (an array's number or string): read byte by byte.
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    end_at!(i + 1);
                } else if b == b'\n' {
                    keep!(i);
                    self.broken(found, "a line break inside a string (a truncated record?)");
                    self.line += 1;
                    self.resync = Resync::LineStart;
                }
                i += 1;
                continue;
            }
            if matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\r' | b'\n') {
                end_at!(i);
                // The delimiter is read again, outside the record.
                continue;
            }
            i += 1;
        }
        keep!(chunk.len());
        i
    }

    /// Scans the inside of an object or array record from `i`, its state in
    /// locals: most of an export's bytes are inside strings, skipped to the
    /// next byte that can end one at `memchr`'s speed. Returns where it
    /// stopped and why (the index is past the record's last byte for
    /// [`Stop::End`], at the line break for the others).
    fn scan_inside(&mut self, chunk: &[u8], mut i: usize) -> (usize, Stop) {
        let (mut depth, base) = (self.depth, self.base);
        let (mut in_string, mut escaped) = (self.in_string, self.escaped);
        let stop = loop {
            if i >= chunk.len() {
                break Stop::ChunkEnd;
            }
            if in_string {
                if escaped {
                    escaped = false;
                    i += 1;
                    continue;
                }
                // Most strings (keys, short values) end within a few bytes:
                // looked for in place; longer ones with memchr.
                let near = chunk.len().min(i + 16);
                let found = match chunk[i..near]
                    .iter()
                    .position(|&b| matches!(b, b'"' | b'\\' | b'\n'))
                {
                    Some(n) => Some(n),
                    None => {
                        memchr::memchr3(b'"', b'\\', b'\n', &chunk[near..]).map(|n| n + near - i)
                    }
                };
                match found {
                    None => {
                        i = chunk.len();
                        break Stop::ChunkEnd;
                    }
                    Some(n) => {
                        i += n;
                        match chunk[i] {
                            b'"' => in_string = false,
                            b'\\' => escaped = true,
                            _ => break Stop::LineBreakInString,
                        }
                        i += 1;
                    }
                }
                continue;
            }
            match chunk[i] {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == base {
                        i += 1;
                        break Stop::End;
                    }
                }
                b'\n' => break Stop::LineBreak,
                _ => {}
            }
            i += 1;
        };
        self.depth = depth;
        self.in_string = in_string;
        self.escaped = escaped;
        (i, stop)
    }

    fn begin_record(&mut self, first: u8) {
        self.in_record = true;
        self.record_line = self.line;
        self.record.clear();
        self.oversized = false;
        self.base = self.depth;
        self.scalar = !matches!(first, b'{' | b'[');
        self.in_string = false;
        self.escaped = false;
        // The opening byte is processed by the record's own scan: `{` and
        // `[` raise the depth, `"` opens the string.
        match first {
            b'{' | b'[' => self.depth += 1,
            b'"' => self.in_string = true,
            _ => {}
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        if self.oversized {
            return;
        }
        if self.record.len() + bytes.len() > MAX_RECORD_BYTES {
            self.oversized = true;
            self.record = Vec::new();
            return;
        }
        self.record.extend_from_slice(bytes);
    }

    /// Hands over the record: `here`, when it lies whole in the chunk, else
    /// what was kept.
    fn end_record(&mut self, found: &mut dyn FnMut(Found<'_>), here: Option<&[u8]>) {
        self.in_record = false;
        self.in_string = false;
        self.scalar = false;
        let line = self.record_line;
        if here.is_some_and(|h| h.len() > MAX_RECORD_BYTES) {
            self.oversized = true;
        }
        if self.oversized {
            self.oversized = false;
            found(Found::Broken {
                line,
                why: "a record over 16 MiB (skipped)",
            });
        } else {
            found(Found::Json {
                bytes: here.unwrap_or(&self.record),
                line,
            });
        }
        self.record.clear();
    }

    fn drop_record(&mut self) {
        self.in_record = false;
        self.in_string = false;
        self.escaped = false;
        self.scalar = false;
        self.oversized = false;
        self.record.clear();
    }

    /// Reports the current record as broken and forgets its brackets.
    fn broken(&mut self, found: &mut dyn FnMut(Found<'_>), why: &'static str) {
        let line = self.record_line;
        self.depth = self.base;
        self.drop_record();
        found(Found::Broken { line, why });
    }

    fn csv_header(
        &mut self,
        chunk: &[u8],
        i: usize,
        found: &mut dyn FnMut(Found<'_>),
    ) -> Result<usize, UnknownFormat> {
        let end = chunk[i..].iter().position(|&b| b == b'\n');
        let to = end.map_or(chunk.len(), |e| i + e);
        self.record.extend_from_slice(&chunk[i..to]);
        if self.record.len() > MAX_HEADER_BYTES {
            self.mode = Mode::Refused;
            return Err(unknown(
                "text whose first line is over 64 KiB long (not a CSV header)".to_owned(),
            ));
        }
        match end {
            None => Ok(chunk.len()),
            Some(_) => {
                if self.record.last() == Some(&b'\r') {
                    self.record.pop();
                }
                let header = std::mem::take(&mut self.record);
                self.line += 1;
                self.mode = Mode::Csv;
                found(Found::CsvHeader { bytes: &header });
                Ok(to + 1)
            }
        }
    }

    fn csv(&mut self, chunk: &[u8], mut i: usize, found: &mut dyn FnMut(Found<'_>)) -> usize {
        let mut from = i;
        while i < chunk.len() {
            let b = chunk[i];
            if !self.in_record {
                self.in_record = true;
                self.record_line = self.line;
                self.record.clear();
                self.oversized = false;
            }
            match b {
                b'"' => {
                    self.quote_line = match self.quote_line {
                        Some(_) => None,
                        None => Some(self.line),
                    };
                }
                b'\n' => {
                    self.line += 1;
                    if self.quote_line.is_none() {
                        self.keep(&chunk[from..i]);
                        self.end_csv_row(found);
                        i += 1;
                        from = i;
                        continue;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        if self.in_record {
            self.keep(&chunk[from..i]);
        }
        i
    }

    fn end_csv_row(&mut self, found: &mut dyn FnMut(Found<'_>)) {
        self.in_record = false;
        if self.record.last() == Some(&b'\r') {
            self.record.pop();
        }
        let line = self.record_line;
        if self.oversized {
            self.oversized = false;
            found(Found::Broken {
                line,
                why: "a row over 16 MiB (skipped)",
            });
        } else if !self.record.iter().all(|b| b.is_ascii_whitespace()) {
            found(Found::CsvRow {
                bytes: &self.record,
                line,
            });
        }
        self.record.clear();
    }
}

/// The refusal of an input in no format the report reads.
pub(crate) fn unknown(found: String) -> UnknownFormat {
    UnknownFormat(format!(
        "unknown format: found {found}; expected Sentry events (a JSON array or JSON lines of \
         the API's events with `entries`, or Sentry's per-event JSON with `event_id`, \
         `exception` or `logentry`), a Discover CSV export (a header naming `title` or \
         `message`), or the matcher's events as JSON lines \
         ({{\"type\", \"message\", \"frames\", \"userAgent\"}})"
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The records of `input` fed in chunks of `size` bytes, as
    /// `(line, text)`, broken ones as `(line, "!why")`.
    fn split(input: &str, size: usize) -> Vec<(u64, String)> {
        let mut s = Splitter::new();
        let mut out = Vec::new();
        let mut push = |f: Found<'_>| match f {
            Found::Json { bytes, line } | Found::CsvRow { bytes, line } => {
                out.push((line, String::from_utf8(bytes.to_vec()).unwrap()));
            }
            Found::CsvHeader { bytes } => {
                out.push((0, String::from_utf8(bytes.to_vec()).unwrap()));
            }
            Found::Broken { line, why } => out.push((line, format!("!{why}"))),
        };
        for chunk in input.as_bytes().chunks(size) {
            s.feed(chunk, &mut push).unwrap();
        }
        s.finish(&mut push).unwrap();
        out
    }

    fn every_chunking(input: &str) -> Vec<(u64, String)> {
        let whole = split(input, input.len().max(1));
        for size in [1, 2, 3, 7] {
            assert_eq!(split(input, size), whole, "chunks of {size}");
        }
        whole
    }

    #[test]
    fn json_lines_and_a_truncated_line() {
        let input = "{\"a\":1}\n{\"b\":\"x}\n{\"c\":[1,\n{\"d\":2}\n";
        assert_eq!(
            every_chunking(input),
            [
                (1, "{\"a\":1}".to_owned()),
                (
                    2,
                    "!a line break inside a string (a truncated record?)".to_owned()
                ),
                (
                    3,
                    "!the line ends inside this record (a truncated line?)".to_owned()
                ),
                (4, "{\"d\":2}".to_owned()),
            ]
        );
    }

    #[test]
    fn arrays_one_line_or_pretty_and_appended() {
        let input = "[{\"a\":\"]}\"},{\"b\":[1,2]}]\n[\n  {\"c\":3},\n  {\"d\":\n 4}\n]";
        assert_eq!(
            every_chunking(input),
            [
                (1, "{\"a\":\"]}\"}".to_owned()),
                (1, "{\"b\":[1,2]}".to_owned()),
                (3, "{\"c\":3}".to_owned()),
                (4, "{\"d\":\n 4}".to_owned()),
            ]
        );
    }

    #[test]
    fn pretty_objects_resync_at_the_next_object() {
        let input = "{\n \"a\": 1\n}\n{\n \"b\": \"broken\n junk\n{\n \"c\": 2\n}\n";
        assert_eq!(
            every_chunking(input),
            [
                (1, "{\n \"a\": 1\n}".to_owned()),
                (
                    4,
                    "!a line break inside a string (a truncated record?)".to_owned()
                ),
                (7, "{\n \"c\": 2\n}".to_owned()),
            ]
        );
    }

    #[test]
    fn scalars_in_an_array_are_records_too() {
        assert_eq!(
            every_chunking("[1, \"x\", {\"a\":1}]"),
            [
                (1, "1".to_owned()),
                (1, "\"x\"".to_owned()),
                (1, "{\"a\":1}".to_owned())
            ]
        );
    }

    #[test]
    fn csv_rows_with_quoted_line_breaks() {
        let input = "\u{feff}title,count\r\n\"a, \"\"b\"\"\nc\",2\r\nplain,1\n\n\"open,3\nx";
        assert_eq!(
            every_chunking(input),
            [
                (0, "title,count".to_owned()),
                (2, "\"a, \"\"b\"\"\nc\",2".to_owned()),
                (4, "plain,1".to_owned()),
                (
                    6,
                    "!a quoted field opened on this line never closes".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn unknown_inputs_are_refused_with_what_was_expected() {
        let refuse = |input: &[u8]| {
            let mut s = Splitter::new();
            let mut sink = |_: Found<'_>| {};
            match s.feed(input, &mut sink) {
                Err(e) => e.0,
                Ok(()) => s.finish(&mut sink).unwrap_err().0,
            }
        };
        assert!(refuse(b"\x1f\x8b\x08\x00").contains("gzip"));
        assert!(refuse(b"\x00\x01binary").contains("unknown format"));
        assert!(refuse(b"   \n ").contains("empty"));
    }
}
