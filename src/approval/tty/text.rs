//! Showing text that came from elsewhere (a command, a directory, an agent's question) on
//! the person's screen: control and invisible characters escaped, rows cut to a width,
//! long text cut in the middle with a note saying so. Pure: text in, rows out. Nothing
//! here may pass a character through that could change what the rest of the screen
//! says.

/// How many rows a command or a question may take on the screen before its middle is
/// left out (with a note saying so).
pub(super) const MAX_ROWS: usize = 20;

/// Whether `c` is shown escaped: control characters, and the invisible ones that change
/// how text around them looks (bidirectional overrides, zero-width characters).
pub fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00ad}'
                | '\u{034f}'
                | '\u{061c}'
                | '\u{115f}'
                | '\u{1160}'
                | '\u{17b4}'
                | '\u{17b5}'
                | '\u{180b}'..='\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{3164}'
                | '\u{fe00}'..='\u{fe0f}'
                | '\u{feff}'
                | '\u{ffa0}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{e0000}'..='\u{e0fff}'
        )
}

/// `text` with every character [`needs_escape`] says so written as `\t`, `\r`, `\xNN`
/// or `\u{NNNN}`; whether any was.
pub fn escape(text: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut any = false;
    for c in text.chars() {
        if !needs_escape(c) {
            out.push(c);
            continue;
        }
        any = true;
        match c {
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
        }
    }
    (out, any)
}

/// `text` on one row of at most `width` columns: escaped, cut with `…`.
pub fn one_row(text: &str, width: usize) -> String {
    let (text, _) = escape(text);
    cut(&text, width)
}

pub(super) fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `text` as rows of at most `width` columns: each of its lines escaped and wrapped,
/// numbered when there is more than one line; when there are more than [`MAX_ROWS`]
/// rows, the middle ones are replaced by a row that says how many were left out.
/// Also whether anything was escaped.
pub fn block(text: &str, width: usize) -> (Vec<String>, bool) {
    let lines: Vec<&str> = text.split('\n').collect();
    let numbered = lines.len() > 1;
    let digits = lines.len().to_string().len();
    let room = if numbered {
        width.saturating_sub(digits + 2).max(8)
    } else {
        width.max(8)
    };
    let mut rows = Vec::new();
    let mut any = false;
    for (i, line) in lines.iter().enumerate() {
        let (escaped, e) = escape(line);
        any |= e;
        let chars: Vec<char> = escaped.chars().collect();
        let mut chunks: Vec<String> = chars.chunks(room).map(|c| c.iter().collect()).collect();
        if chunks.is_empty() {
            chunks.push(String::new());
        }
        for (j, chunk) in chunks.into_iter().enumerate() {
            if numbered {
                let number = if j == 0 {
                    (i + 1).to_string()
                } else {
                    String::new()
                };
                rows.push(format!("{number:>digits$}  {chunk}"));
            } else {
                rows.push(chunk);
            }
        }
    }
    (limit(rows, text, width), any)
}

/// Prose (a question, an option) as rows of at most `width` columns: escaped, wrapped
/// between words where it can be, the middle left out past [`MAX_ROWS`] rows.
pub fn prose(text: &str, width: usize) -> Vec<String> {
    let room = width.max(8);
    let mut rows = Vec::new();
    for line in text.split('\n') {
        let (escaped, _) = escape(line);
        let mut rest: Vec<char> = escaped.chars().collect();
        while rest.len() > room {
            // The last space that leaves at least half a row; else a hard break.
            let split = (room / 2..=room).rev().find(|&i| rest[i] == ' ');
            let (row, skip) = match split {
                Some(i) => (rest[..i].iter().collect::<String>(), i + 1),
                None => (rest[..room].iter().collect::<String>(), room),
            };
            rows.push(row.trim_end().to_owned());
            rest.drain(..skip);
        }
        rows.push(rest.into_iter().collect());
    }
    limit(rows, text, width)
}

/// At most [`MAX_ROWS`] rows: the first and the last, and a row that says how many
/// were left out between them.
fn limit(rows: Vec<String>, text: &str, width: usize) -> Vec<String> {
    if rows.len() <= MAX_ROWS {
        return rows;
    }
    let head = MAX_ROWS - 6;
    let tail = 5;
    let hidden = rows.len() - head - tail;
    let mut kept: Vec<String> = rows[..head].to_vec();
    let note = format!(
        "… {hidden} rows left out ({} characters in all) …",
        text.chars().count()
    );
    kept.push(cut(&note, width));
    kept.extend_from_slice(&rows[rows.len() - tail..]);
    kept
}
