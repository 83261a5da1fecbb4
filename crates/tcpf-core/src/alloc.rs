//! `HugePageAlloc`: the global allocator the engine's binaries install (`run_json`, the `run`
//! example, the Python extension). Small allocations go to the system allocator unchanged; an
//! allocation of at least [`LARGE`] bytes gets its own mapping, aligned to and rounded up to
//! 2 MiB, that the kernel is asked to back with transparent huge pages (`madvise(MADV_HUGEPAGE)`).
//!
//! Why: a run with thousands of flows spends most of its time waiting for memory. Each packet
//! reads its flow's state, its links' state and the queue's entries, scattered over tens of
//! megabytes (3 200 flows: ~38 MB). With 4-KiB pages those reads also miss the TLB, and each
//! miss is a page walk; with 2-MiB pages the TLB covers all of the few large arrays (flows,
//! links, the pipes' chunks, the event queue's nodes), which hold most of it. A large block
//! grows by moving its pages (`mremap`), never by copying them, so it never holds both sizes.
//!
//! Nothing a run computes depends on where its memory is, so results are unchanged. Where the
//! kernel has huge pages off (`never`) the `madvise` fails and is ignored: the mapping works
//! with ordinary pages. Off Linux everything goes to the system allocator.
//!
//! Measured (benchmarks/README, 2026-12-06): 3 200 flows between 5 % faster and no faster,
//! with the host's phase; a flood that trips the 1 GiB memory guard peaks at 536 MB instead of
//! 1 057 MB, in half the time (glibc copies a growing heap block; `mremap` moves pages).
//!
//! Cost: a large allocation's resident size rounds up to whole 2-MiB pages once touched (less
//! than 2 MiB more per allocation; a run has a handful of large ones). 3 200 flows: peak
//! resident memory 44 MB instead of 38 MB.

#[cfg(target_os = "linux")]
use std::alloc::{GlobalAlloc, Layout, System};

/// The smallest allocation given its own huge-page mapping (1 MiB: smaller ones would waste
/// more than half of their 2-MiB page).
pub const LARGE: usize = 1 << 20;

/// A transparent huge page (x86-64 and most Linux targets): a large block's alignment and the
/// unit its mapping is rounded up to.
pub const HUGE: usize = 1 << 21;

/// See the module documentation.
#[cfg(target_os = "linux")]
pub struct HugePageAlloc;

/// Off Linux: the system allocator itself.
#[cfg(not(target_os = "linux"))]
pub use std::alloc::System as HugePageAlloc;

#[cfg(target_os = "linux")]
mod huge {
    use super::HUGE;
    use std::ptr;

    pub fn rounded(size: usize) -> usize {
        (size + HUGE - 1) & !(HUGE - 1)
    }

    /// An anonymous mapping of `len` + 2 MiB bytes with protection `prot`: its start, and the
    /// 2-MiB boundary inside it where `len` bytes fit.
    unsafe fn reserve(len: usize, prot: libc::c_int) -> Option<(usize, usize)> {
        let span = len.checked_add(HUGE)?;
        let raw = libc::mmap(ptr::null_mut(), span, prot, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        if raw == libc::MAP_FAILED {
            return None;
        }
        let raw = raw as usize;
        Some((raw, (raw + HUGE - 1) & !(HUGE - 1)))
    }

    /// Give back the parts of `reserve(len, _)`'s mapping at `raw` outside `[start, start + len)`.
    unsafe fn trim(raw: usize, start: usize, len: usize) {
        if start > raw {
            libc::munmap(raw as *mut libc::c_void, start - raw);
        }
        let tail = raw + HUGE - start; // the span's end minus `start + len`
        if tail > 0 {
            libc::munmap((start + len) as *mut libc::c_void, tail);
        }
    }

    /// Advice only: with huge pages off this fails and the mapping keeps small pages.
    unsafe fn advise(start: usize, len: usize) {
        libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }

    /// A fresh zeroed mapping of `rounded(size)` bytes at a 2-MiB boundary, or null.
    ///
    /// # Safety
    /// Plain system calls on memory no one else owns.
    pub unsafe fn map(size: usize) -> *mut u8 {
        let len = rounded(size);
        let Some((raw, start)) = reserve(len, libc::PROT_READ | libc::PROT_WRITE) else { return ptr::null_mut() };
        trim(raw, start, len);
        advise(start, len);
        start as *mut u8
    }

    /// `map(old)`'s block at `p` resized to `rounded(new)` bytes, or null (then `p` is
    /// untouched). Shrinking gives back the tail in place; growing moves the pages to a fresh
    /// 2-MiB boundary with `mremap`, without copying them and without holding both sizes at
    /// once.
    ///
    /// # Safety
    /// `p` came from `map(old)` (or `remap(_, _, old)`).
    pub unsafe fn remap(p: *mut u8, old: usize, new: usize) -> *mut u8 {
        let (old_len, len) = (rounded(old), rounded(new));
        if len <= old_len {
            if len < old_len {
                libc::munmap(p.add(len) as *mut libc::c_void, old_len - len);
            }
            return p;
        }
        // The destination: an aligned place inside an inaccessible reservation, which
        // MREMAP_FIXED replaces.
        let Some((raw, start)) = reserve(len, libc::PROT_NONE) else { return ptr::null_mut() };
        let q = libc::mremap(p as *mut libc::c_void, old_len, len, libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED, start as *mut libc::c_void);
        // Either way the reservation's ends go back. On failure its middle is left alone: the
        // kernel may have unmapped it already, and another thread may since have mapped there
        // (at worst it stays reserved: address space, no memory).
        trim(raw, start, len);
        if q == libc::MAP_FAILED {
            return ptr::null_mut();
        }
        advise(start, len);
        start as *mut u8
    }

    /// # Safety
    /// `p` is a block of `size` bytes from `map` or `remap`, not used again.
    pub unsafe fn unmap(p: *mut u8, size: usize) {
        libc::munmap(p as *mut libc::c_void, rounded(size));
    }
}

#[cfg(target_os = "linux")]
#[inline]
fn is_large(l: &Layout) -> bool {
    l.size() >= LARGE && l.align() <= HUGE
}

#[cfg(target_os = "linux")]
unsafe impl GlobalAlloc for HugePageAlloc {
    #[inline]
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if is_large(&l) { huge::map(l.size()) } else { System.alloc(l) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        // A fresh anonymous mapping is already zero.
        if is_large(&l) { huge::map(l.size()) } else { System.alloc_zeroed(l) }
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if is_large(&l) { huge::unmap(p, l.size()) } else { System.dealloc(p, l) }
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        let new = Layout::from_size_align_unchecked(new_size, l.align());
        match (is_large(&l), is_large(&new)) {
            (false, false) => System.realloc(p, l, new_size),
            (true, true) => huge::remap(p, l.size(), new_size),
            _ => {
                let q = self.alloc(new);
                if !q.is_null() {
                    std::ptr::copy_nonoverlapping(p, q, l.size().min(new_size));
                    self.dealloc(p, l);
                }
                q
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::{GlobalAlloc, Layout};

    /// Large and small blocks through every entry point (growing, shrinking, crossing the
    /// threshold both ways) keep their contents, and large ones sit on 2-MiB boundaries (Linux).
    #[test]
    fn blocks_keep_their_contents() {
        let a = HugePageAlloc;
        unsafe {
            let cases = [(64usize, 4096usize), (4096, LARGE), (LARGE, LARGE + 8), (LARGE + 8, 3 * LARGE), (5 * LARGE, LARGE + 1), (3 * LARGE, 100), (LARGE, 64)];
            for &(from, to) in &cases {
                let l = Layout::from_size_align(from, 8).unwrap();
                let p = a.alloc(l);
                assert!(!p.is_null());
                if cfg!(target_os = "linux") && from >= LARGE {
                    assert_eq!(p as usize % HUGE, 0);
                }
                for i in 0..from {
                    *p.add(i) = (i % 251) as u8;
                }
                let q = a.realloc(p, l, to);
                assert!(!q.is_null());
                if cfg!(target_os = "linux") && to >= LARGE {
                    assert_eq!(q as usize % HUGE, 0);
                }
                for i in 0..from.min(to) {
                    assert_eq!(*q.add(i), (i % 251) as u8, "byte {i} after {from} -> {to}");
                }
                *q.add(to - 1) = 7; // the whole new size is usable
                a.dealloc(q, Layout::from_size_align(to, 8).unwrap());
            }
            let l = Layout::from_size_align(LARGE + 1, 64).unwrap();
            let z = a.alloc_zeroed(l);
            assert!((0..l.size()).all(|i| *z.add(i) == 0));
            a.dealloc(z, l);
        }
    }
}
