//! Reading protocol lines with a deadline, and waiting on more than one thing at once.
//! The requester, the approver tools and `gate watch` all read this way; the broker,
//! which serves many peers from one thread, keeps its own buffers.

use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Instant;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::protocol::MAX_LINE;

/// What waiting for a line came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Got {
    /// One line, without its newline.
    Line(Vec<u8>),
    /// The peer closed the connection (a partial last line is dropped).
    Eof,
    /// More than [`MAX_LINE`] bytes without a newline.
    TooLong,
    /// The deadline passed.
    Timeout,
    /// The interrupt descriptor became readable first.
    Interrupted,
}

/// Wait until `fd` is readable, the `interrupt` descriptor is readable, or the deadline
/// passes (none: wait for ever). An interrupt wins over data ready at the same moment;
/// a closed or failed `fd` counts as readable, so that the read says what happened.
pub fn wait_readable(
    fd: BorrowedFd<'_>,
    deadline: Option<Instant>,
    interrupt: Option<BorrowedFd<'_>>,
) -> io::Result<Waited> {
    loop {
        let timeout = match deadline {
            None => PollTimeout::NONE,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Ok(Waited::Timeout);
                }
                // Round up so that a wait never ends a little before the deadline and
                // spins; cap at what poll takes.
                let ms = left.as_millis().saturating_add(1).min(i32::MAX as u128);
                PollTimeout::try_from(ms as u64).unwrap_or(PollTimeout::MAX)
            }
        };
        let mut fds = vec![PollFd::new(fd, PollFlags::POLLIN)];
        if let Some(interrupt) = interrupt {
            fds.push(PollFd::new(interrupt, PollFlags::POLLIN));
        }
        match poll(&mut fds, timeout) {
            Ok(0) => continue,
            Ok(_) => {
                let ready = |p: &PollFd<'_>| p.revents().is_some_and(|r| !r.is_empty());
                if fds.get(1).is_some_and(ready) {
                    return Ok(Waited::Interrupted);
                }
                if ready(&fds[0]) {
                    return Ok(Waited::Ready);
                }
            }
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(io::Error::from(e)),
        }
    }
}

/// The outcome of [`wait_readable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    Ready,
    Timeout,
    Interrupted,
}

/// Reads newline-terminated lines of at most [`MAX_LINE`] bytes.
pub struct LineReader<S> {
    stream: S,
    buf: Vec<u8>,
}

impl<S: Read + AsFd> LineReader<S> {
    pub fn new(stream: S) -> Self {
        LineReader {
            stream,
            buf: Vec::new(),
        }
    }

    pub fn get_mut(&mut self) -> &mut S {
        &mut self.stream
    }

    /// The next line, waiting until the deadline (none: forever) or until `interrupt`
    /// becomes readable.
    pub fn read_line(
        &mut self,
        deadline: Option<Instant>,
        interrupt: Option<BorrowedFd<'_>>,
    ) -> io::Result<Got> {
        loop {
            if let Some(end) = self.buf.iter().position(|&b| b == b'\n') {
                if end + 1 > MAX_LINE {
                    return Ok(Got::TooLong);
                }
                let mut line: Vec<u8> = self.buf.drain(..=end).collect();
                line.pop();
                return Ok(Got::Line(line));
            }
            if self.buf.len() >= MAX_LINE {
                return Ok(Got::TooLong);
            }
            match wait_readable(self.stream.as_fd(), deadline, interrupt)? {
                Waited::Ready => {}
                Waited::Timeout => return Ok(Got::Timeout),
                Waited::Interrupted => return Ok(Got::Interrupted),
            }
            let mut chunk = [0u8; 8192];
            match self.stream.read(&mut chunk) {
                Ok(0) => return Ok(Got::Eof),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // A reset connection is a closed one.
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => return Ok(Got::Eof),
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    #[test]
    fn lines_eof_and_timeout() {
        let (mut a, b) = UnixStream::pair().unwrap();
        let mut r = LineReader::new(b);
        a.write_all(b"one\ntwo\nthr").unwrap();
        let soon = || Some(Instant::now() + Duration::from_millis(50));
        assert_eq!(
            r.read_line(soon(), None).unwrap(),
            Got::Line(b"one".to_vec())
        );
        assert_eq!(
            r.read_line(soon(), None).unwrap(),
            Got::Line(b"two".to_vec())
        );
        assert_eq!(r.read_line(soon(), None).unwrap(), Got::Timeout);
        drop(a);
        assert_eq!(r.read_line(soon(), None).unwrap(), Got::Eof);
    }

    #[test]
    fn an_overlong_line_is_refused() {
        let (mut a, b) = UnixStream::pair().unwrap();
        let mut r = LineReader::new(b);
        std::thread::spawn(move || {
            let _ = a.write_all(&vec![b'x'; MAX_LINE + 10]);
        });
        let deadline = Some(Instant::now() + Duration::from_secs(5));
        assert_eq!(r.read_line(deadline, None).unwrap(), Got::TooLong);
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_read() {
        let (mut a, b) = UnixStream::pair().unwrap();
        let mut r = LineReader::new(b);
        std::thread::spawn(move || {
            let mut line = vec![b'x'; MAX_LINE - 1];
            line.push(b'\n');
            let _ = a.write_all(&line);
        });
        let deadline = Some(Instant::now() + Duration::from_secs(5));
        match r.read_line(deadline, None).unwrap() {
            Got::Line(l) => assert_eq!(l.len(), MAX_LINE - 1),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_interrupt_wins() {
        let (_a, b) = UnixStream::pair().unwrap();
        let (mut i, j) = UnixStream::pair().unwrap();
        i.write_all(b"!").unwrap();
        let mut r = LineReader::new(b);
        assert_eq!(
            r.read_line(None, Some(j.as_fd())).unwrap(),
            Got::Interrupted
        );
    }
}
