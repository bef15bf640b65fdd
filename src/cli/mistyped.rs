//! A word where a subcommand's name goes that is a mistyped subcommand (`chek`) or
//! another tool's (`init`), and what gate has instead.

use super::SUBCOMMANDS;

/// Words that other tools take as subcommands, and what gate has instead.
const OTHER_WORDS: &[(&str, &str)] = &[
    ("init", "gate doctor"),
    ("setup", "gate doctor"),
    ("install", "gate doctor"),
    ("status", "gate doctor"),
    ("config", "gate doctor"),
    ("info", "gate doctor"),
    ("version", "gate --version"),
    ("run", "gate -c COMMAND"),
    ("exec", "gate -- PROGRAM"),
    ("list", "gate pending"),
    ("explain", "gate check"),
    ("reject", "gate deny"),
    ("daemon", "gate serve"),
    ("start", "gate serve"),
    ("complete", "gate completions"),
];

/// What gate would have been asked for, if `word` (standing where a subcommand's name
/// goes) is a mistyped subcommand — close to a subcommand's name, or a word other tools
/// use — rather than a script name: `gate check` for `chek`. Only plain words count
/// (letters, digits, `-`, `_`): `build.sh` or `./chek` is a script.
pub(crate) fn meant_subcommand(word: &str) -> Option<String> {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !plain || word.starts_with('-') {
        return None;
    }
    let lower = word.to_ascii_lowercase();
    if let Some((_, instead)) = OTHER_WORDS.iter().find(|(w, _)| *w == lower) {
        return Some((*instead).to_owned());
    }
    let names = SUBCOMMANDS.iter().map(|s| s.name).chain(["help"]);
    names
        .filter_map(|name| {
            let distance = edit_distance(&lower, name);
            // One edit for the short names (ask, deny, check, trust), two for the
            // others; or the start of a name (`comp`, `appr`). (Two edits from a
            // five-letter name reach common script names: `test` is two from `trust`.)
            let close = distance <= if name.len() <= 5 { 1 } else { 2 };
            let start = lower.len() >= 3 && name.starts_with(&lower);
            (close || start).then_some((distance, name))
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| format!("gate {name}"))
}

/// The optimal string alignment distance: insertions, deletions, substitutions and
/// swaps of two neighbours, each one edit.
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // rows[i][j]: the distance between a[..i] and b[..j].
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}
