//! gate's own `execve` with deny rules at exec: the path, argv and envp arrays copied to
//! three addresses drawn at random for this exec, so that the filter can name the one
//! call gate makes itself by its pointers ([`crate::sandbox::OwnExec`]) and let it
//! through without the supervisor's round trip. gate judged that exec already, exactly
//! as the supervisor would ([`crate::supervisor::Execs::own_refusal`]); every other exec
//! of the command, including a retry of this one through other arrays, is notified.
//!
//! Each array sits at a random 8-byte-aligned offset in a mapping of its own at a random
//! page (`MAP_FIXED_NOREPLACE`, Linux 4.17): about 43 bits of chance per pointer, 129 for
//! the three a command would have to guess together, each wrong guess an ordinary exec
//! that is judged.

use std::ffi::{CStr, CString};

use nix::errno::Errno;

use crate::sandbox::OwnExec;

/// The lowest and highest address a mapping is drawn between: above the first 4 GiB
/// (where a program and its heap usually are) and below the top of the 47-bit user
/// address space every x86_64 and arm64 kernel gives.
const LOW: u64 = 1 << 32;
const HIGH: u64 = 1 << 46;
const PAGE: u64 = 4096;
/// How many random places are tried for a mapping before gate gives up and execs as
/// before (notified).
const TRIES: usize = 8;

/// The three arrays in place. Dropping it unmaps them (gate's exec failed).
pub(crate) struct Placed {
    maps: Vec<(*mut libc::c_void, usize)>,
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
}

unsafe extern "C" {
    /// The process's environment (POSIX), as `std::env::set_var` left it.
    static environ: *const *const libc::c_char;
}

impl Placed {
    /// Copy `path`, argv's pointers and the environment's pointers (the strings stay
    /// where they are: the filter checks only the arrays' addresses) to random places.
    /// `None` when no place could be had: the exec is then notified like any other.
    pub(crate) fn new(path: &CStr, argv: &[CString]) -> Option<Placed> {
        let mut placed = Placed {
            maps: Vec::new(),
            path: std::ptr::null(),
            argv: std::ptr::null(),
            envp: std::ptr::null(),
        };
        placed.path = placed.place(path.to_bytes_with_nul())?.cast();
        let mut pointers: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
        pointers.push(std::ptr::null());
        placed.argv = placed.place(as_bytes(&pointers))?.cast();
        let mut env: Vec<*const libc::c_char> = Vec::new();
        // SAFETY: gate is single-threaded and nothing changes the environment while it
        // is read; `environ` is a NULL-terminated array of C strings (or NULL).
        unsafe {
            let mut at = environ;
            while !at.is_null() && !(*at).is_null() {
                env.push(*at);
                at = at.add(1);
            }
        }
        env.push(std::ptr::null());
        placed.envp = placed.place(as_bytes(&env))?.cast();
        Some(placed)
    }

    /// The filter's view of the exec: its three pointers.
    pub(crate) fn own(&self) -> OwnExec {
        OwnExec([self.path as u64, self.argv as u64, self.envp as u64])
    }

    /// `execve` with the placed arrays. Returns only when it failed.
    pub(crate) fn exec(&self) -> Errno {
        // SAFETY: the three pointers are NUL- and NULL-terminated copies alive in this
        // process's own mappings, and the strings argv and envp point to are alive (the
        // caller keeps argv; the environment is not changed after `new`).
        unsafe { libc::execve(self.path, self.argv, self.envp) };
        Errno::last()
    }

    /// A copy of `bytes` at a random 8-byte-aligned offset in a new mapping at a random
    /// page; the address of the copy.
    fn place(&mut self, bytes: &[u8]) -> Option<*const u8> {
        let len = (bytes.len() as u64 + PAGE).div_ceil(PAGE) * PAGE;
        for _ in 0..TRIES {
            let mut random = [0u8; 16];
            crate::random::fill(&mut random).ok()?;
            let at = u64::from_ne_bytes(random[..8].try_into().expect("8 bytes"));
            let offset = u64::from_ne_bytes(random[8..].try_into().expect("8 bytes"));
            let page = (LOW + at % (HIGH - LOW - len)) / PAGE * PAGE;
            // Room for the bytes after the offset: `len` has a page to spare.
            let offset = (offset % PAGE) & !7;
            // SAFETY: a new private anonymous mapping at an address that nothing of this
            // process uses (MAP_FIXED_NOREPLACE fails rather than replace a mapping).
            let map = unsafe {
                libc::mmap(
                    page as *mut libc::c_void,
                    len as usize,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                    -1,
                    0,
                )
            };
            if map == libc::MAP_FAILED {
                continue;
            }
            self.maps.push((map, len as usize));
            if map as u64 != page {
                // A kernel before 4.17 takes the address as a hint only: not drawn.
                continue;
            }
            // SAFETY: `map` is `len` writable bytes, and offset + bytes.len() <= len.
            unsafe {
                let to = map.cast::<u8>().add(offset as usize);
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), to, bytes.len());
                return Some(to);
            }
        }
        None
    }
}

impl Drop for Placed {
    fn drop(&mut self) {
        for &(map, len) in &self.maps {
            // SAFETY: a mapping this value made and nothing else refers to after drop.
            unsafe { libc::munmap(map, len) };
        }
    }
}

fn as_bytes(pointers: &[*const libc::c_char]) -> &[u8] {
    // SAFETY: the slice's memory, read as bytes, for as long as the slice lives.
    unsafe { std::slice::from_raw_parts(pointers.as_ptr().cast(), std::mem::size_of_val(pointers)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arrays_are_copied_to_three_random_places() {
        let path = CString::new("/bin/true").unwrap();
        let argv = vec![CString::new("true").unwrap(), CString::new("x").unwrap()];
        let a = Placed::new(&path, &argv).expect("room for three mappings");
        let b = Placed::new(&path, &argv).expect("room for three mappings");
        let OwnExec(pa) = a.own();
        let OwnExec(pb) = b.own();
        for (x, y) in pa.iter().zip(&pb) {
            assert!((LOW..HIGH).contains(x), "{x:#x}");
            assert_ne!(x, y, "drawn anew each time");
            assert_eq!(x % 8, 0);
        }
        // SAFETY: the copies are alive while `a` is.
        unsafe {
            assert_eq!(CStr::from_ptr(a.path), path.as_c_str());
            assert_eq!(CStr::from_ptr(*a.argv.add(1)), c"x");
            assert!((*a.argv.add(2)).is_null());
        }
    }
}
