//! Random bytes from the kernel, by getrandom(2): for the ids of calls and the broker's
//! token, which an approver answers and a model must not guess. No file to open (a
//! sandbox or a missing /dev cannot take it away) and no hasher keys standing in.

use std::io;

/// Fill `buf` from getrandom(2). It blocks only until the kernel's pool is first
/// initialised (early boot); an interrupted call is retried and a short read continued.
pub fn fill(buf: &mut [u8]) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        // SAFETY: `rest` is a valid, writable buffer of `rest.len()` bytes for the whole
        // call; getrandom writes at most that many bytes into it.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        done += n as usize;
    }
    Ok(())
}

/// `len` random bytes as lowercase hex (2 × `len` digits).
pub fn hex(len: usize) -> io::Result<String> {
    let mut bytes = vec![0u8; len];
    fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_has_two_digits_a_byte_and_differs_each_time() {
        let a = hex(8).unwrap();
        let b = hex(8).unwrap();
        assert_eq!(a.len(), 16);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(a, b);
    }

    #[test]
    fn a_large_buffer_is_filled_whole() {
        // getrandom returns at most 32 MiB - 1 per call on some kernels; 1 MiB is one
        // call here, and the loop must not stop short either way.
        let mut buf = vec![0u8; 1 << 20];
        fill(&mut buf).unwrap();
        let zeros = buf.iter().filter(|&&b| b == 0).count();
        assert!(
            zeros < buf.len() / 128,
            "{zeros} zero bytes of {}",
            buf.len()
        );
    }

    #[test]
    fn an_empty_buffer_asks_nothing() {
        fill(&mut []).unwrap();
    }
}
