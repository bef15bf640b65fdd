//! A quick reader for files that are nothing but rule lists, one rule per line: what
//! `gate import` writes (hundreds of rules, read before every command), and a person's
//! own long lists of rules. Such a file is TOML like any other, and the TOML parser
//! reads it correctly; it is slow at it, building a table per rule (issue 25 measured
//! 1.5 ms for 500 imported rules, against a budget of 0.1 ms).
//!
//! This reader takes a file only when every line is one of:
//!
//! - blank, or a comment;
//! - `allow = [`, `deny = [`, `ask = [` or `unsandboxed = [` (each key once), opening a list;
//! - inside a list, one entry and its comma: `"RULE",` or a table of `rule`, `exact`
//!   and `from` (`{ rule = "RULE", exact = true, from = "FILE:LINE" },`), with strings
//!   that hold no quote;
//! - `]`, closing the list.
//!
//! and no backslash and no control character other than tab is anywhere in the file.
//! Anything else, anywhere, and the whole file goes to the TOML parser instead: so does
//! a file whose rules this layer refuses, so that every message about a file comes from
//! one reader. Both readers hand each entry to the same [`super::take_rule`], so a rule
//! means the same whichever read it; a property test holds them to the same layer.

use super::{FileCx, FileKind, Layer, RuleItem};

/// The keys of the lists this reader takes.
const LIST_KEYS: [&str; 4] = ["allow", "deny", "ask", "unsandboxed"];

/// The layer `text` holds, when it is made only of rule lists one rule per line and
/// every rule is good; `None` otherwise (the TOML parser then reads it and says what is
/// wrong, if anything is).
pub(super) fn read(cx: &FileCx<'_>, text: &str) -> Option<Layer> {
    // The whole text is looked at once for the bytes that would need a closer look (see
    // [`odd`]); a file that has any goes to the TOML parser. What is left to find on a
    // line is then a few ASCII marks, by byte.
    if odd(text.as_bytes()) {
        return None;
    }
    // Room for as many rules as the file has lines, at most.
    let mut reader = Reader::new(memchr::memchr_iter(b'\n', text.as_bytes()).count());
    for line in lines(text) {
        reader.line(cx, line)?;
    }
    reader.finish()
}

/// How much of a file [`read_piecewise`] holds at a time: a file this size or smaller is
/// read whole (see `load::read_layer`).
pub(super) const PIECE: usize = 8 * 1024;

/// [`read`], for a file of more than [`PIECE`] bytes, read a piece at a time: its
/// lines, up to the last whole one, are read from each piece before the next is read
/// over them. A file read whole before every command costs the process a fresh page of
/// memory for every 4 KiB of it (an imported policy of 500 rules is 45 KiB: 11 page
/// faults, more than reading and taking apart its comments costs otherwise). `Ok(None)`
/// as [`read`] says it, and also for a line longer than a piece, or more than `max`
/// bytes: the caller then reads the file whole and parses it, and says what is wrong.
pub(super) fn read_piecewise(
    cx: &FileCx<'_>,
    file: &mut impl std::io::Read,
    size: usize,
    max: usize,
) -> std::io::Result<Option<Layer>> {
    read_in_pieces(cx, file, size, max, PIECE)
}

/// [`read_piecewise`], in pieces of `length` bytes.
fn read_in_pieces(
    cx: &FileCx<'_>,
    file: &mut impl std::io::Read,
    size: usize,
    max: usize,
    length: usize,
) -> std::io::Result<Option<Layer>> {
    // Room for a rule on every 48 bytes (what `gate import` writes takes about 90 a
    // line): a file of shorter lines grows the room once or twice, and a larger
    // guess would be memory the process maps and unmaps for nothing.
    let mut reader = Reader::new(size / 48);
    let mut piece = vec![0u8; length];
    let (mut held, mut total) = (0, 0);
    loop {
        let n = match file.read(&mut piece[held..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        total += n;
        if total > max {
            return Ok(None);
        }
        let end = if n == 0 {
            // The end of the file: what is held is its last line.
            held
        } else {
            held += n;
            match memchr::memrchr(b'\n', &piece[..held]) {
                Some(last) => last + 1,
                None if held == length => return Ok(None),
                None => continue,
            }
        };
        let whole = &piece[..end];
        if odd(whole) {
            return Ok(None);
        }
        let Ok(text) = std::str::from_utf8(whole) else {
            return Ok(None);
        };
        if n == 0 {
            // As `str::split` gives it: the text after the last line feed is a line,
            // even empty.
            return Ok(reader.line(cx, text).and_then(|()| reader.finish()));
        }
        // The lines before the last line feed; what follows it is not a whole line yet.
        for line in lines(&text[..text.len() - 1]) {
            if reader.line(cx, line).is_none() {
                return Ok(None);
            }
        }
        piece.copy_within(end..held, 0);
        held -= end;
    }
}

/// The lists read so far, line by line.
struct Reader {
    layer: Layer,
    seen: [bool; LIST_KEYS.len()],
    /// The key of the list being read.
    open: Option<&'static str>,
    /// The number of the last line read.
    number: u32,
    /// Room for how many allow rules to make when their list opens: one growth instead
    /// of one per doubling.
    room: usize,
    /// The file part of the last imported-from that [`as_written`] took (see
    /// [`plain_from_like`]).
    from_path: String,
}

impl Reader {
    fn new(room: usize) -> Self {
        Reader {
            layer: Layer::default(),
            seen: [false; LIST_KEYS.len()],
            open: None,
            number: 0,
            room,
            from_path: String::new(),
        }
    }

    /// Read the next line; `None` when it is outside the shape, or holds a rule this
    /// layer refuses.
    fn line(&mut self, cx: &FileCx<'_>, line: &str) -> Option<()> {
        self.number += 1;
        let trimmed = trim_blanks(line);
        if trimmed.is_empty() || trimmed.starts_with('#') {
            return Some(());
        }
        match self.open {
            None => {
                let (key, value) = split_at_byte(trimmed, b'=')?;
                let key = trim_blanks(key);
                let index = LIST_KEYS.iter().position(|k| *k == key)?;
                if self.seen[index] || trim_blanks(value) != "[" {
                    return None;
                }
                // The always-allow file holds allow rules only.
                if cx.kind == FileKind::Always && key != "allow" {
                    return None;
                }
                self.seen[index] = true;
                self.open = Some(LIST_KEYS[index]);
                if key == "allow" {
                    self.layer.allow.reserve(self.room);
                }
            }
            Some(key) => {
                if trimmed == "]" {
                    self.open = None;
                } else {
                    let item = match as_written(trimmed, self.number, &mut self.from_path) {
                        Some(item) => item,
                        None => entry_item(trim_blanks(trimmed.strip_suffix(',')?), self.number)?,
                    };
                    if item.exact && !super::may_be_exact(key) {
                        return None;
                    }
                    super::take_rule(cx, &mut self.layer, key, item).ok()?;
                }
            }
        }
        Some(())
    }

    /// The layer, when every list was closed (one left open is malformed).
    fn finish(self) -> Option<Layer> {
        self.open.is_none().then_some(self.layer)
    }
}

/// Whether `bytes` hold a byte this reader leaves to the TOML parser: a control
/// character other than tab and line feed (TOML allows none in a comment or a string,
/// and a carriage return or any other is not one of the shape's tokens or blanks), or a
/// backslash (an escape: this reader reads strings without escapes).
///
/// One pass, 64 bytes at a time, with no early exit and no branch inside a block: the
/// compiler turns each block into vector instructions. It was most of what this reader
/// did per byte when each string and comment was looked at on its own, and half again
/// as much when written with `&&` (about 1.3 instructions a byte now, against 3).
fn odd(bytes: &[u8]) -> bool {
    let mut blocks = bytes.chunks_exact(64);
    blocks.any(odd_in) || odd_in(blocks.remainder())
}

/// [`odd`], for one block.
fn odd_in(bytes: &[u8]) -> bool {
    let mut odd = 0u8;
    for &b in bytes {
        let control = u8::from(b < b' ') & u8::from(b != b'\t') & u8::from(b != b'\n');
        odd |= control | u8::from(b == 0x7f) | u8::from(b == b'\\');
    }
    odd != 0
}

/// Whether `from`, in a file [`odd`] let through, is one [`super::is_plain_from`]
/// takes, by the checks an ASCII one without a tab needs (no control character but tab
/// got into the file); and that it holds no quote. `false` is not the last word: a tab,
/// or a character past ASCII, is left to `is_plain_from`.
fn plain_from(from: &str) -> bool {
    let bytes = from.as_bytes();
    // Word by word, then by vector: a loop asking all three at once took more.
    from.is_ascii()
        && memchr::memchr2(b'"', b'\t', bytes).is_none()
        && bytes.iter().any(|&b| b != b' ')
}

/// [`plain_from`], quicker for the imported-from that most often comes next: the last
/// one's file (`last`, which this keeps) with another line. Then the file part was found
/// plain already, and `:` and digits are plain.
fn plain_from_like(from: &str, last: &mut String) -> bool {
    // The line is a few bytes from the end: a loop from there, where `rsplit_once`
    // took some 230 instructions an entry.
    let parts = from
        .bytes()
        .rposition(|b| b == b':')
        .map(|at| (&from[..at], &from[at + 1..]));
    if let Some((file, line)) = parts {
        if file == last && !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) {
            return true;
        }
    }
    let plain = plain_from(from);
    if let (true, Some((file, _))) = (plain, parts) {
        last.clear();
        last.push_str(file);
    }
    plain
}

/// The lines of `text`, as `text.split('\n')` gives them, found with `memchr`.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let now = rest?;
        match memchr::memchr(b'\n', now.as_bytes()) {
            Some(end) => {
                rest = Some(&now[end + 1..]);
                Some(&now[..end])
            }
            None => {
                rest = None;
                Some(now)
            }
        }
    })
}

/// `text` without TOML's white space within a line (space and tab) at either end.
fn trim_blanks(text: &str) -> &str {
    let bytes = text.as_bytes();
    let start = bytes
        .iter()
        .position(|&b| !is_blank(b))
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|&b| !is_blank(b))
        .map_or(start, |i| i + 1);
    // Both ends are next to an ASCII byte or the text's ends: character boundaries.
    &text[start..end.max(start)]
}

/// `text` before and after the first `byte` (an ASCII one), when it has one. A loop
/// rather than `memchr`: the pieces of a line it looks in are a few bytes long, where
/// setting up a vector search costs more than it saves.
fn split_at_byte(text: &str, byte: u8) -> Option<(&str, &str)> {
    let at = text.bytes().position(|b| b == byte)?;
    Some((&text[..at], &text[at + 1..]))
}

/// TOML's white space within a line.
fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// One entry, on line `line`: a string, or a table of `rule`, `exact` and `from`.
fn entry_item(entry: &str, line: u32) -> Option<RuleItem<'_>> {
    if entry.starts_with('"') {
        let (rule, rest) = string(entry)?;
        return rest.is_empty().then(|| RuleItem {
            rule,
            line,
            examples: Vec::new(),
            exact: false,
            from: None,
        });
    }
    let mut rest = entry.strip_prefix('{')?.strip_suffix('}')?;
    let (mut rule, mut exact, mut from) = (None, None, None);
    loop {
        rest = trim_blanks(rest);
        let (key, after) = split_at_byte(rest, b'=')?;
        let value = trim_blanks(after);
        let after_value = match trim_blanks(key) {
            "rule" if rule.is_none() => {
                let (text, after) = string(value)?;
                rule = Some(text);
                after
            }
            "from" if from.is_none() => {
                let (text, after) = string(value)?;
                from = Some(text);
                after
            }
            "exact" if exact.is_none() => {
                let (flag, after) = if let Some(after) = value.strip_prefix("true") {
                    (true, after)
                } else {
                    (false, value.strip_prefix("false")?)
                };
                exact = Some(flag);
                after
            }
            _ => return None,
        };
        let after_value = trim_blanks(after_value);
        if after_value.is_empty() {
            break;
        }
        rest = after_value.strip_prefix(',')?;
    }
    let rule = rule?;
    if let Some(from) = from {
        if !plain_from(from) && !super::is_plain_from(from) {
            return None;
        }
    }
    Some(RuleItem {
        rule,
        line,
        examples: Vec::new(),
        exact: exact.unwrap_or(false),
        from,
    })
}

/// An entry in the one shape `gate import` writes (`{ rule = "RULE", from = "FROM" },`,
/// with `exact = true, ` after the rule when it is exact), read without taking it
/// apart key by key: an imported policy's hundreds of entries are read before every
/// command. `None` for anything else, which [`entry_item`] then reads; what this takes,
/// that reads the same.
fn as_written<'a>(line: &'a str, number: u32, last: &mut String) -> Option<RuleItem<'a>> {
    let rest = line.strip_prefix("{ rule = \"")?;
    let end = rest.bytes().position(|b| b == b'"')?;
    let (rule, after) = (&rest[..end], &rest[end + 1..]);
    let (exact, after) = match after.strip_prefix(", exact = true") {
        Some(after) => (true, after),
        None => (false, after),
    };
    let from = after.strip_prefix(", from = \"")?.strip_suffix("\" },")?;
    // The string ends at its first quote; and `from` is one [`super::is_plain_from`]
    // takes (anything else, [`entry_item`] reads).
    plain_from_like(from, last).then_some(RuleItem {
        rule,
        line: number,
        examples: Vec::new(),
        exact,
        from: Some(from),
    })
}

/// A basic string at the start of `text`, and what follows it. [`odd`] has made sure
/// that the file holds no escape and no control character, so the string ends at the
/// next quote.
fn string(text: &str) -> Option<(&str, &str)> {
    let body = text.strip_prefix('"')?;
    let end = memchr::memchr(b'"', body.as_bytes())?;
    Some((&body[..end], &body[end + 1..]))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use proptest::prelude::*;

    use super::*;

    fn cx(text: &str, kind: FileKind) -> FileCx<'_> {
        FileCx::new(
            Path::new("/home/u/.config/gate/config.d/import-claude.toml"),
            text,
            kind,
            None,
        )
    }

    /// A layer as text that does not depend on the order of a hash map: each rule list
    /// with its origins (and whether a rule is exact), then everything else.
    fn view(layer: &Layer) -> String {
        let mut rest = layer.clone();
        let allow = std::mem::take(&mut rest.allow);
        let deny = std::mem::take(&mut rest.deny);
        let ask = std::mem::take(&mut rest.ask);
        let unsandboxed = std::mem::take(&mut rest.unsandboxed);
        let sorted = |rules: &crate::policy::AllowRules| {
            let mut v: Vec<String> = rules
                .iter()
                .map(|(r, o)| format!("{r:?} {o} exact={}", rules.is_exact(r)))
                .collect();
            v.sort();
            v
        };
        let in_order = |rules: Vec<(&str, crate::policy::Origin)>| {
            rules
                .into_iter()
                .map(|(r, o)| format!("{r:?} {o}"))
                .collect::<Vec<_>>()
        };
        format!(
            "allow {:?}\ndeny {:?}\nask {:?}\nunsandboxed {:?}\nrest {rest:?}",
            sorted(&allow),
            in_order(deny.iter().collect()),
            in_order(ask.iter().collect()),
            sorted(&unsandboxed),
        )
    }

    /// What the quick reader makes of `text`, and what the TOML parser does.
    fn both(text: &str, kind: FileKind) -> (Option<Layer>, Result<Layer, String>) {
        let cx = cx(text, kind);
        (
            read(&cx, text),
            super::super::parse_toml(&cx, text).map_err(|e| e.to_string()),
        )
    }

    /// The quick reader took `text`, and read it as the TOML parser does.
    fn agree(text: &str, kind: FileKind) -> bool {
        match both(text, kind) {
            (Some(quick), Ok(full)) => {
                assert_eq!(view(&quick), view(&full), "{text}");
                true
            }
            (Some(quick), Err(e)) => {
                panic!(
                    "the quick reader took a file the TOML parser refuses ({e}):\n{text}\n{quick:?}"
                )
            }
            (None, _) => false,
        }
    }

    /// The entries that look like what `gate import` writes but are not: each is read
    /// as the TOML parser reads it (the quick reader's shortcut takes none of them).
    #[test]
    fn near_misses_of_the_written_shape_read_as_the_toml_parser_reads_them() {
        for entry in [
            r#"{ rule = "x", from = "/s.json"4" },"#,
            "{ rule = \"x\", from = \"/s.json:4\t\" },",
            "{ rule = \"x\", from = \"/\u{e9}.json:4\" },",
            r#"{ rule = "x", from = " " },"#,
            r#"{ rule = "x", from = "" },"#,
            r#"{ rule = "x", exact = true, from = "/s.json:4" },"#,
            r#"{ rule = "x", exact = true , from = "/s.json:4" },"#,
            r#"{ rule = "x" , from = "/s.json:4" },"#,
            r#"{ rule = "x", from = "/s.json:4" }"#,
        ] {
            for key in ["allow", "deny"] {
                let text = format!("{key} = [\n  {entry}\n]\n");
                match both(&text, FileKind::User) {
                    (Some(quick), Ok(full)) => assert_eq!(view(&quick), view(&full), "{text}"),
                    (Some(_), Err(e)) => {
                        panic!("taken, though the TOML parser refuses it ({e}):\n{text}")
                    }
                    (None, _) => {}
                }
            }
        }
    }

    #[test]
    fn what_gate_import_writes_takes_the_quick_reader_and_reads_the_same() {
        use crate::import::plan::{Planned, toml};
        use crate::import::{GateRule, RuleKind, Source};
        let settings = Path::new("/home/u/.claude/settings.json");
        let rules: Vec<Planned> = [
            (RuleKind::Allow, "npm run test", false),
            (RuleKind::Allow, "git status", true),
            (RuleKind::Allow, "git log --oneline", false),
            (RuleKind::Ask, "git push", false),
            (RuleKind::Deny, "rm -rf", false),
            (RuleKind::Deny, "sudo", false),
        ]
        .into_iter()
        .enumerate()
        .map(|(i, (kind, text, exact))| Planned {
            rule: GateRule {
                kind,
                text: text.to_owned(),
                exact,
                examples: Vec::new(),
            },
            from: Source {
                path: settings.to_path_buf(),
                line: u32::try_from(i).unwrap() + 4,
                text: String::new(),
            },
        })
        .collect();
        let text = toml("claude", &rules, &[settings]);
        assert!(agree(&text, FileKind::User), "{text}");
        let layer = read(&cx(&text, FileKind::User), &text).unwrap();
        assert_eq!(
            (layer.allow.len(), layer.ask.len(), layer.deny.len()),
            (3, 1, 2)
        );
        assert!(layer.allow.is_exact("git status"));
        let (_, origin) = layer.allow.find("git status").unwrap();
        assert_eq!(
            origin.to_string(),
            "/home/u/.config/gate/config.d/import-claude.toml:6 (imported from /home/u/.claude/settings.json:5)"
        );
    }

    #[test]
    fn a_file_outside_the_shape_goes_to_the_toml_parser() {
        for text in [
            "level = \"ask\"\n",
            "allow = [\"git status\"]\n",
            "allow = [\n  \"git status\" # why\n]\n",
            "allow = [\n  \"git status\"\n]\n",
            "allow = [\n  'git status',\n]\n",
            "allow = [\n  \"git \\u0073tatus\",\n]\n",
            "\"allow\" = [\n  \"git status\",\n]\n",
            "allow = [\n  \"git status\",\n]\nallow = [\n]\n",
            "allow = [\n  \"git status\",\n",
            "allow = [\r\n  \"git status\",\r\n]\r\n",
            "allow = [\n  { rule = \"git status\", match = [\"git status\"] },\n]\n",
            "allow = [\n  { rule = \"git status\", },\n]\n",
            "allow = [\n  { rule = \"a\", rule = \"b\" },\n]\n",
            "allow = [\n  { exact = true },\n]\n",
            "allow = [\n  { rule = \"a\", exact = yes },\n]\n",
            "allow = [\n  { rule = \"a\", from = \"\" },\n]\n",
            "deny = [\n  { rule = \"rm\", exact = true },\n]\n",
            "deny = [\n  \"rm; ls\",\n]\n",
            "# a comment with a bell \u{7}\nallow = [\n]\n",
            "[approval]\nallow = [\n]\n",
            "\u{feff}allow = [\n]\n",
        ] {
            assert!(!agree(text, FileKind::User), "{text:?}");
        }
        // The always-allow file holds allow rules only, and none imported.
        for text in [
            "deny = [\n  \"rm\",\n]\n",
            "allow = [\n  { rule = \"a\", from = \"/x:1\" },\n]\n",
        ] {
            assert!(!agree(text, FileKind::Always), "{text:?}");
            assert!(both(text, FileKind::Always).1.is_err(), "{text:?}");
        }
    }

    #[test]
    fn comments_blank_lines_and_indentation_stay_in_the_shape() {
        let text = "# head\n\n\tallow\t=\t[\n  # inside\n\n  \"a b\"\t,\n  {rule=\"c\",exact=false,from=\"x:1\"},\n\t]\n\nask = [\n]\n";
        assert!(agree(text, FileKind::User), "{text}");
    }

    /// Pieces of lines near the shape, good and bad, for the property below.
    fn piece() -> impl Strategy<Value = String> {
        let rule = prop_oneof![
            Just("git status".to_owned()),
            Just("rm -rf".to_owned()),
            Just("if rm".to_owned()),
            Just("a\\\"b".to_owned()),
            Just("git push; ls".to_owned()),
            Just(String::new()),
            Just("tool run #x".to_owned()),
            Just("caf\u{e9}".to_owned()),
            Just("no\u{a0}break".to_owned()),
            Just("next\u{85}line".to_owned()),
            Just("tab\there".to_owned()),
            Just("two\\\\back".to_owned()),
            "[a-z ]{1,10}",
        ];
        let key = prop_oneof![
            Just("allow"),
            Just("deny"),
            Just("ask"),
            Just("unsandboxed"),
            Just("level"),
            Just("\"allow\""),
        ];
        let blank = prop_oneof![Just(""), Just(" "), Just("\t"), Just("  ")];
        prop_oneof![
            (key.clone(), blank.clone()).prop_map(|(k, b)| format!("{k}{b}={b}[")),
            Just("]".to_owned()),
            Just("] # x".to_owned()),
            Just("allow = []".to_owned()),
            Just("level = \"ask\"".to_owned()),
            Just("# comment".to_owned()),
            Just("# a \\ and a \u{a9}".to_owned()),
            Just("\t# a\ttab".to_owned()),
            Just(String::new()),
            Just("[approval]".to_owned()),
            (rule.clone(), blank.clone(), any::<bool>())
                .prop_map(|(r, b, comma)| format!("  \"{r}\"{b}{}", if comma { "," } else { "" })),
            (
                rule.clone(),
                prop_oneof![
                    Just(""),
                    Just(", exact = true"),
                    Just(", exact = false"),
                    Just(",exact=1")
                ],
                prop_oneof![
                    Just(""),
                    Just(", from = \"/s.json:4\""),
                    Just(", from = \" \""),
                    Just(", from = \"/s.json:4\t\""),
                    Just(", from = \"\u{3000}\""),
                    Just(", from = \"/\u{e9}.json:4\""),
                    Just(", from = \"/s.json\"4\""),
                    Just(", from = \"C:\\\\s.json:4\""),
                    Just(", from = 'x'")
                ],
                prop_oneof![Just(" },"), Just("},"), Just(" }"), Just(", },")],
            )
                .prop_map(|(r, e, f, end)| format!("  {{ rule = \"{r}\"{e}{f}{end}")),
            (rule, blank).prop_map(|(r, b)| format!("  {{ from = \"/s:1\",{b}rule = \"{r}\" }},")),
        ]
    }

    /// A file that gives at most `step` bytes a read.
    struct Trickle<'a> {
        text: &'a [u8],
        step: usize,
    }

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.text.len());
            buf[..n].copy_from_slice(&self.text[..n]);
            self.text = &self.text[n..];
            Ok(n)
        }
    }

    proptest! {
        /// Whatever the quick reader takes, it reads as the TOML parser does; and it
        /// takes nothing the TOML parser refuses.
        #[test]
        fn the_quick_reader_agrees_with_the_toml_parser(
            lines in proptest::collection::vec(piece(), 0..12),
            always in any::<bool>(),
        ) {
            let text = lines.join("\n") + "\n";
            let kind = if always { FileKind::Always } else { FileKind::User };
            agree(&text, kind);
        }

        /// The block-at-a-time look finds what a byte-by-byte one does, wherever in
        /// a block (or in the short end) the byte is.
        #[test]
        fn the_look_at_the_whole_file_finds_every_odd_byte(
            bytes in proptest::collection::vec(
                prop_oneof![
                    8 => Just(b'a'),
                    1 => Just(b'\t'),
                    1 => Just(b'\n'),
                    1 => Just(b'\\'),
                    1 => Just(0x7f_u8),
                    1 => 0u8..0x20,
                    1 => 0x80u8..=0xff,
                ],
                0..300,
            ),
        ) {
            let expected = bytes
                .iter()
                .any(|&b| (b < b' ' && b != b'\t' && b != b'\n') || b == 0x7f || b == b'\\');
            prop_assert_eq!(odd(&bytes), expected);
        }

        /// Taken from the last one's file, an imported-from is plain exactly when it
        /// is plain on its own.
        #[test]
        fn a_from_like_the_last_one_is_plain_as_it_is_on_its_own(
            froms in proptest::collection::vec(
                prop_oneof![
                    (
                        prop_oneof![Just("/h/s.json"), Just("/h/a b"), Just(" "), Just(""),
                            Just("/h/\u{e9}"), Just("/h/\"q"), Just("/h/t\t")],
                        "[0-9]{0,3}|[0-9\t\" \u{e9}:]{0,3}",
                    )
                        .prop_map(|(file, line)| format!("{file}:{line}")),
                    "[ a\t\"\u{e9}:/0-9]{0,12}",
                ],
                1..8,
            ),
        ) {
            let mut last = String::new();
            for from in &froms {
                prop_assert_eq!(plain_from_like(from, &mut last), plain_from(from), "{:?}", from);
            }
        }

        /// The one-pass look at an imported-from file takes only what
        /// `is_plain_from` takes, and holds no quote.
        #[test]
        fn a_plain_from_is_one_the_full_check_takes(
            from in "[ a\t\"\u{e9}\u{a0}:/]{0,70}",
        ) {
            if plain_from(&from) {
                prop_assert!(super::super::is_plain_from(&from));
                prop_assert!(!from.contains('"'));
            }
            let simple = !from.is_empty()
                && from.bytes().all(|b| b == b'a' || b == b':' || b == b'/' || b == b' ')
                && from.bytes().any(|b| b != b' ');
            prop_assert_eq!(plain_from(&from), simple);
        }

        /// Read a piece at a time, whatever the pieces' length and however little
        /// each read returns, a file reads as it does whole; a line longer than a
        /// piece, or a file larger than allowed, is left to the caller.
        #[test]
        fn a_file_read_a_piece_at_a_time_reads_as_it_does_whole(
            lists in proptest::collection::vec(
                (
                    prop_oneof![Just("allow"), Just("deny"), Just("ask")],
                    proptest::collection::vec(piece(), 0..8),
                ),
                0..4,
            ),
            length in 8usize..160,
            step in 1usize..64,
            max in prop_oneof![3 => Just(usize::MAX), 1 => 0usize..400],
            end in any::<bool>(),
        ) {
            // Lists, mostly well formed (so that both readers take many), with the
            // generator's other lines between them.
            let mut text = String::new();
            for (key, entries) in lists {
                text.push_str(&format!("{key} = [\n"));
                for entry in entries {
                    text.push_str(&entry);
                    text.push('\n');
                }
                text.push_str("]\n");
            }
            if !end {
                text.pop();
            }
            let cx = cx(&text, FileKind::User);
            let whole = read(&cx, &text);
            let mut file = Trickle { text: text.as_bytes(), step };
            let pieces = read_in_pieces(&cx, &mut file, text.len(), max, length).unwrap();
            let fits = text.split('\n').all(|line| line.len() < length) && text.len() <= max;
            match (&pieces, &whole) {
                (Some(p), Some(w)) => prop_assert_eq!(view(p), view(w)),
                (None, Some(_)) => prop_assert!(!fits, "refused, though every line fits"),
                (Some(_), None) => prop_assert!(false, "taken in pieces, refused whole"),
                (None, None) => {}
            }
        }

        /// The same, for well-formed lists (so that the quick reader takes many).
        #[test]
        fn the_quick_reader_agrees_on_lists_it_takes(
            lists in proptest::collection::vec(
                (
                    prop_oneof![Just("allow"), Just("deny"), Just("ask"), Just("unsandboxed")],
                    proptest::collection::vec(piece(), 0..6),
                ),
                0..4,
            ),
        ) {
            let mut text = String::new();
            for (key, entries) in lists {
                text.push_str(&format!("{key} = [\n"));
                for entry in entries.iter().filter(|e| e.starts_with("  ")) {
                    text.push_str(entry);
                    text.push('\n');
                }
                text.push_str("]\n");
            }
            agree(&text, FileKind::User);
        }
    }
}
