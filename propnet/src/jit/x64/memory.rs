//! Executable memory, the only foreign function interface of native code:
//! machine code mapped readable and executable (never writable and
//! executable at once), and calls into it.

/// Machine code in memory mapped readable and executable (never writable and
/// executable at once).
#[cfg_attr(miri, allow(dead_code))]
pub(super) struct ExecutableMemory {
    start: *mut u8,
    len: usize,
}

// SAFETY: the memory is written once, before it becomes executable, and only
// read and executed after: a thread may own it and drop it (unmap it) once no
// other uses it, which ownership ensures.
unsafe impl Send for ExecutableMemory {}
// SAFETY: shared, it is only read and executed, never written (it is mapped
// read-only), and the code keeps no state of its own.
unsafe impl Sync for ExecutableMemory {}

impl ExecutableMemory {
    /// The bytes mapped.
    pub(super) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(all(target_arch = "x86_64", unix, not(miri)))]
impl ExecutableMemory {
    /// Maps `code` executable, or `None` if the system refuses.
    pub(super) fn new(code: &[u8]) -> Option<ExecutableMemory> {
        let len = code.len().max(1);
        // SAFETY: a fresh private anonymous mapping, written within its length
        // while writable, then made read-only and executable.
        unsafe {
            let start = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if start == libc::MAP_FAILED {
                return None;
            }
            let memory = ExecutableMemory {
                start: start.cast(),
                len,
            };
            std::ptr::copy_nonoverlapping(code.as_ptr(), memory.start, code.len());
            (libc::mprotect(start, len, libc::PROT_READ | libc::PROT_EXEC) == 0).then_some(memory)
        }
    }

    /// Calls the function at `offset` with `values` in `rdi` and `words` in `rsi`.
    ///
    /// # Safety
    /// A function of the System V convention taking two pointers must start at
    /// `offset`, and what it does with them must be sound.
    pub(super) unsafe fn call(&self, offset: usize, values: *mut u8, words: *mut u64) {
        debug_assert!(offset < self.len);
        // SAFETY: `offset` is the start of a code segment, within the mapping
        // (checked when the program is assembled), where the caller guarantees
        // a function of this type begins.
        let function: extern "sysv64" fn(*mut u8, *mut u64) = std::mem::transmute(self.start.add(offset));
        function(values, words)
    }
}

#[cfg(all(target_arch = "x86_64", unix, not(miri)))]
impl Drop for ExecutableMemory {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`, which nothing uses any more.
        unsafe { libc::munmap(self.start.cast(), self.len) };
    }
}

#[cfg(not(all(target_arch = "x86_64", unix, not(miri))))]
impl ExecutableMemory {
    /// No memory: native code runs only on x86-64 Unix, and not under Miri,
    /// which cannot execute it (the evaluators then run their interpreters).
    pub(super) fn new(_code: &[u8]) -> Option<ExecutableMemory> {
        None
    }

    /// Never called: [`ExecutableMemory::new`] gives no memory on this platform.
    ///
    /// # Safety
    /// As on x86-64 Unix.
    pub(super) unsafe fn call(&self, _offset: usize, _values: *mut u8, _words: *mut u64) {
        unreachable!("no native code on this platform")
    }
}
