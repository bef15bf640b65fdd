//! HTTP/1.x off a connection: a head's bytes up to its blank line, and a body copied by
//! its framing. A chunked body is read strictly and written anew (each size in plain
//! hexadecimal, extensions and trailer fields dropped), so the server reads the chunks
//! the proxy read, and nothing after the last one.

#![forbid(unsafe_code)]

use std::io::{self, BufRead, Read, Write};

use super::http::{self, Framing};

/// The longest chunk size line or trailer line read.
const MAX_LINE: u64 = 4096;

/// Reads a head, line by line, up to [`http::MAX_HEAD`]: until a blank line. A line
/// that is a bare LF ends it too, so that a client that ends its lines so gets its 400
/// at once (the head parsers refuse it) rather than a wait for more.
pub fn read_head(r: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(1024);
    loop {
        let before = head.len();
        let n = r
            .by_ref()
            .take((http::MAX_HEAD - before) as u64 + 1)
            .read_until(b'\n', &mut head)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the head ended early",
            ));
        }
        if head.len() > http::MAX_HEAD {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the head is too long",
            ));
        }
        let line = &head[before..];
        if before > 0 && (line == b"\r\n" || line == b"\n") {
            return Ok(head);
        }
    }
}

/// One line of at most [`MAX_LINE`] bytes, without its CRLF; a bare LF, a CR inside or
/// a line too long is an error.
fn crlf_line(from: &mut impl BufRead, line: &mut Vec<u8>, what: &str) -> io::Result<()> {
    line.clear();
    from.by_ref().take(MAX_LINE).read_until(b'\n', line)?;
    let ok = line.ends_with(b"\r\n") && !line[..line.len() - 2].contains(&b'\r');
    if !ok {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a malformed {what}"),
        ));
    }
    line.truncate(line.len() - 2);
    Ok(())
}

/// Copies one body, framed as `framing`, from `from` to `to`.
pub fn copy_body(from: &mut impl BufRead, to: &mut impl Write, framing: Framing) -> io::Result<()> {
    match framing {
        Framing::Length(n) => copy_exact(from, to, n),
        Framing::UntilClose => loop {
            let chunk = from.fill_buf()?;
            if chunk.is_empty() {
                return Ok(());
            }
            let n = chunk.len();
            to.write_all(chunk)?;
            from.consume(n);
        },
        Framing::Chunked => copy_chunked(from, to),
    }
}

/// A chunked body, read strictly and written anew: `SIZE CRLF DATA CRLF` for each
/// chunk, `0 CRLF CRLF` at the end.
fn copy_chunked(from: &mut impl BufRead, to: &mut impl Write) -> io::Result<()> {
    let mut line = Vec::with_capacity(64);
    loop {
        crlf_line(from, &mut line, "chunk size line")?;
        let size = http::chunk_size(&line).map_err(io::Error::other)?;
        if size == 0 {
            // Trailer fields, checked and dropped, then the blank line.
            loop {
                crlf_line(from, &mut line, "trailer")?;
                if line.is_empty() {
                    return to.write_all(b"0\r\n\r\n");
                }
                let text = std::str::from_utf8(&line)
                    .map_err(|_| io::Error::other("a trailer that is not UTF-8"))?;
                http::field_line(text).map_err(io::Error::other)?;
            }
        }
        to.write_all(format!("{size:x}\r\n").as_bytes())?;
        copy_exact(from, to, size)?;
        let mut end = [0u8; 2];
        from.read_exact(&mut end)?;
        if end != *b"\r\n" {
            return Err(io::Error::other("a chunk without its CRLF"));
        }
        to.write_all(b"\r\n")?;
    }
}

/// Copies exactly `n` bytes.
pub fn copy_exact(from: &mut impl BufRead, to: &mut impl Write, mut n: u64) -> io::Result<()> {
    while n > 0 {
        let chunk = from.fill_buf()?;
        if chunk.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the body ended early",
            ));
        }
        let k = chunk.len().min(usize::try_from(n).unwrap_or(usize::MAX));
        to.write_all(&chunk[..k])?;
        from.consume(k);
        n -= k as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
