//! Rules' texts and origins, kept compactly: a policy is loaded before every command,
//! and an imported one adds hundreds of rules that the command mostly never looks at
//! (issue 25).
//!
//! Every text is in one string, one after another, so adding a rule allocates nothing
//! of its own. An origin is kept as the lines it names and a shared part: the file (and
//! the imported-from file) with the lines taken out, which all of a file's rules have
//! in common. [`Store::origin`] puts the two back together when one is asked for (when
//! a rule matches, or is shown).

use std::sync::Arc;

use super::{ImportedFrom, Origin};

/// No line: an origin with no imported-from line (lines are numbered from 1).
const NO_LINE: u32 = 0;

/// Rule texts with their origins, in the order added.
#[derive(Debug, Clone, Default)]
pub(crate) struct Store {
    /// Every rule's text, one after another.
    text: String,
    rows: Vec<Row>,
    /// The origins given, their lines taken out (see [`unlined`]): one for each file
    /// (and imported-from file), flag or variable the rules came from.
    shared: Vec<Origin>,
}

/// One rule: where its text is, and its origin.
#[derive(Debug, Clone, Copy)]
struct Row {
    start: u32,
    end: u32,
    /// Its origin's shared part, in [`Store::shared`].
    shared: u32,
    line: u32,
    from_line: u32,
    /// What the set keeps of its own for the rule (an allow rule: whether it is exact).
    mark: bool,
}

impl Store {
    /// Add `text` with its origin and mark; its position.
    pub(crate) fn push(&mut self, text: &str, origin: &Origin, mark: bool) -> usize {
        let (line, from_line) = lines(origin);
        // Most rules come from where the one before came from: then nothing of the
        // origin is copied.
        let index = match self.shared.last() {
            Some(last) if same_but_lines(last, origin) => self.shared.len() - 1,
            _ => {
                self.shared.push(unlined(origin.clone()));
                self.shared.len() - 1
            }
        };
        let start = self.text.len();
        self.text.push_str(text);
        self.rows.push(Row {
            start: fits(start),
            end: fits(self.text.len()),
            shared: fits(index),
            line,
            from_line,
            mark,
        });
        self.rows.len() - 1
    }

    /// Add `other`'s rules after these.
    pub(crate) fn append(&mut self, other: Store) {
        if self.rows.is_empty() {
            *self = other;
            return;
        }
        if other.rows.len() > self.rows.len() {
            // The larger store keeps its allocations and takes the smaller one in: a
            // person's few rules before an imported file's hundreds are then copied,
            // rather than the hundreds (new memory, which the process must fault in,
            // before every command). Only the rows' order says which rule comes first;
            // where a text or a shared part sits does not.
            let mut larger = other;
            larger.take_in_front(std::mem::take(self));
            *self = larger;
            return;
        }
        let (text, shared) = (fits(self.text.len()), fits(self.shared.len()));
        self.text.push_str(&other.text);
        self.rows.extend(other.rows.into_iter().map(|row| Row {
            start: row.start + text,
            end: row.end + text,
            shared: row.shared + shared,
            ..row
        }));
        self.shared.extend(other.shared);
    }

    /// Put `earlier`'s rules before these, its texts and shared parts after theirs.
    fn take_in_front(&mut self, earlier: Store) {
        let (text, shared) = (fits(self.text.len()), fits(self.shared.len()));
        self.text.push_str(&earlier.text);
        self.shared.extend(earlier.shared);
        self.rows.splice(
            0..0,
            earlier.rows.into_iter().map(|row| Row {
                start: row.start + text,
                end: row.end + text,
                shared: row.shared + shared,
                ..row
            }),
        );
    }

    /// Room for `rows` more rules, and their texts at a typical rule's length: one
    /// allocation each, instead of one per doubling, each of which leaves the last
    /// behind in memory the process must fault in.
    pub(crate) fn reserve(&mut self, rows: usize) {
        /// About what a rule takes (`git push --force`, `npm run test`).
        const TEXT_BYTES: usize = 16;
        self.rows.reserve(rows);
        self.text.reserve(rows.saturating_mul(TEXT_BYTES));
    }

    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub(crate) fn text(&self, i: usize) -> &str {
        let row = &self.rows[i];
        &self.text[row.start as usize..row.end as usize]
    }

    pub(crate) fn mark(&self, i: usize) -> bool {
        self.rows[i].mark
    }

    /// The origin rule `i` was added with.
    pub(crate) fn origin(&self, i: usize) -> Origin {
        let row = &self.rows[i];
        let mut origin = self.shared[row.shared as usize].clone();
        match &mut origin {
            Origin::File { line, .. } | Origin::Always { line, .. } => *line = row.line,
            Origin::Imported { line, from, .. } => {
                *line = row.line;
                from.line = (row.from_line != NO_LINE).then_some(row.from_line);
            }
            Origin::BuiltIn | Origin::Env(_) | Origin::Flag(_) | Origin::Approver => {}
        }
        origin
    }

    /// Every text as bytes, with its mark, in position order: for looking through them
    /// all (a text's bytes are found without checking where its characters start).
    pub(crate) fn rows(&self) -> impl Iterator<Item = (&[u8], bool)> {
        let text = self.text.as_bytes();
        self.rows
            .iter()
            .map(move |row| (&text[row.start as usize..row.end as usize], row.mark))
    }

    /// Every text, in position order.
    pub(crate) fn texts(&self) -> impl Iterator<Item = &str> {
        (0..self.rows.len()).map(|i| self.text(i))
    }
}

/// An origin's lines: its own, and its imported-from line.
fn lines(origin: &Origin) -> (u32, u32) {
    match origin {
        Origin::File { line, .. } | Origin::Always { line, .. } => (*line, NO_LINE),
        Origin::Imported { line, from, .. } => (*line, from.line.unwrap_or(NO_LINE)),
        Origin::BuiltIn | Origin::Env(_) | Origin::Flag(_) | Origin::Approver => (0, NO_LINE),
    }
}

/// An origin without its lines.
fn unlined(origin: Origin) -> Origin {
    match origin {
        Origin::File { path, .. } => Origin::File { path, line: 0 },
        Origin::Always { path, .. } => Origin::Always { path, line: 0 },
        Origin::Imported { path, from, .. } => Origin::Imported {
            path,
            line: 0,
            from: ImportedFrom {
                file: from.file,
                line: None,
            },
        },
        other => other,
    }
}

/// Whether `origin` is `shared` but for its lines (files compared as the same
/// allocation first: a file's rules share it).
fn same_but_lines(shared: &Origin, origin: &Origin) -> bool {
    fn same<T: ?Sized + PartialEq>(a: &Arc<T>, b: &Arc<T>) -> bool {
        Arc::ptr_eq(a, b) || a == b
    }
    match (shared, origin) {
        (Origin::File { path: a, .. }, Origin::File { path: b, .. })
        | (Origin::Always { path: a, .. }, Origin::Always { path: b, .. }) => same(a, b),
        (
            Origin::Imported {
                path: a, from: f, ..
            },
            Origin::Imported {
                path: b, from: g, ..
            },
        ) => same(a, b) && same(&f.file, &g.file),
        (Origin::File { .. } | Origin::Always { .. } | Origin::Imported { .. }, _) => false,
        (shared, origin) => shared == origin,
    }
}

/// A position or length in a store: a rule is a line of a file or of a command line,
/// and a store holds a policy's rules, far below 4 GiB.
fn fits(n: usize) -> u32 {
    u32::try_from(n).expect("a policy's rules take less than 4 GiB")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn every_origin_comes_back_as_it_was_given_and_texts_survive_an_append() {
        let file: Arc<Path> = Path::new("/c/config.toml").into();
        let from = |text: &str| ImportedFrom::new(text, None);
        let origins = [
            Origin::File {
                path: file.clone(),
                line: 3,
            },
            Origin::File {
                path: file.clone(),
                line: 4,
            },
            Origin::Imported {
                path: file.clone(),
                line: 5,
                from: from("/h/s.json:9"),
            },
            Origin::Imported {
                path: file.clone(),
                line: 6,
                from: from("/h/s.json"),
            },
            Origin::Imported {
                path: file.clone(),
                line: 7,
                from: from("/h/s.json:01"),
            },
            Origin::Always {
                path: file.clone(),
                line: 1,
            },
            Origin::Flag("--allow"),
            Origin::Env("GATE_ALLOW"),
            Origin::BuiltIn,
            Origin::Approver,
        ];
        let mut first = Store::default();
        let mut second = Store::default();
        for (i, origin) in origins.iter().enumerate() {
            let store = if i % 2 == 0 { &mut first } else { &mut second };
            store.push(&format!("rule {i}"), origin, i % 3 == 0);
        }
        first.append(second);
        let mut seen: Vec<(String, Origin, bool)> = (0..first.len())
            .map(|i| (first.text(i).to_owned(), first.origin(i), first.mark(i)))
            .collect();
        seen.sort_by(|a, b| a.0.cmp(&b.0));
        for (i, origin) in origins.iter().enumerate() {
            assert_eq!(seen[i], (format!("rule {i}"), origin.clone(), i % 3 == 0));
            assert_eq!(seen[i].1.to_string(), origin.to_string());
        }
        // A file's rules share one origin.
        let mut one = Store::default();
        for line in 1..=100 {
            one.push(
                "x",
                &Origin::File {
                    path: file.clone(),
                    line,
                },
                false,
            );
        }
        assert_eq!(one.shared.len(), 1);
    }

    #[test]
    fn an_append_keeps_the_order_given_whichever_store_is_larger() {
        let file: Arc<Path> = Path::new("/c/config.toml").into();
        let store = |name: &str, n: u32, imported: bool| {
            let mut store = Store::default();
            for line in 1..=n {
                let origin = if imported {
                    Origin::Imported {
                        path: file.clone(),
                        line,
                        from: ImportedFrom::new(&format!("/h/{name}.json:{line}"), None),
                    }
                } else {
                    Origin::File {
                        path: file.clone(),
                        line,
                    }
                };
                store.push(&format!("{name} {line}"), &origin, line % 2 == 0);
            }
            store
        };
        let rows = |s: &Store| -> Vec<(String, Origin, bool)> {
            (0..s.len())
                .map(|i| (s.text(i).to_owned(), s.origin(i), s.mark(i)))
                .collect()
        };
        for (n, m) in [(1, 5), (5, 1), (3, 3), (0, 4), (4, 0), (2, 40)] {
            let (a, b) = (store("a", n, false), store("b", m, true));
            let mut expected = rows(&a);
            expected.extend(rows(&b));
            let mut appended = a.clone();
            appended.append(b.clone());
            assert_eq!(rows(&appended), expected, "{n} rules, then {m}");
            // A rule added afterwards comes last, and shares the origin before it.
            appended.push(
                "later",
                &expected.last().map_or(Origin::BuiltIn, |r| r.1.clone()),
                true,
            );
            assert_eq!(appended.text(appended.len() - 1), "later");
        }
    }
}
