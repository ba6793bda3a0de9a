//! Linux: the pages of the addon's relocation table given back once the
//! dynamic loader has applied it.
//!
//! When Node loads the addon, `ld.so` reads the whole of `.rela.dyn` (663 KB
//! in the release build: 28,059 relative relocations, one for each pointer
//! in the addon's vtables and static tables) and applies every entry at load
//! (the addon is linked `BIND_NOW`). Nothing reads the table again, yet its
//! pages stay mapped and count in the process's resident set: about 0.65 MiB
//! of the "RSS after connecting" figure (`docs/benchmark.md`). Packed
//! relative relocations (`-z pack-relative-relocs`, `DT_RELR`) would shrink
//! the table to a few KB, but need glibc 2.36 at run time.
//!
//! [`release_loader_pages`] tells the kernel, with `madvise(MADV_DONTNEED)`,
//! that the process no longer needs those pages. The table lies in a
//! read-only, file-backed segment that is never written, so the pages are
//! clean copies of the file. A later read of the range (a `dlsym` on the
//! addon, a debugger) faults the same bytes back in from the file, and the
//! page cache keeps or drops them as for any file. Nothing else is released:
//! only the pages wholly inside the `DT_RELA` table, and only when that table
//! lies in the file-backed part (`p_filesz`) of a `PT_LOAD` segment mapped
//! read-only (no `PF_W`, no `PF_X`) that overlaps no `PT_GNU_RELRO`,
//! `PT_DYNAMIC` or `PT_TLS` range, of an object without text relocations
//! (`DT_TEXTREL`, `DF_TEXTREL`): pages the loader may have written are never
//! touched. A layout that puts the table in an executable segment (GNU ld's
//! `-z noseparate-code`) releases nothing.

use std::ffi::c_void;
use std::ops::Range;

/// `DT_NULL`: the end of the dynamic section.
const DT_NULL: i64 = 0;
/// `DT_RELA`: the address of the `Elf64_Rela` relocation table.
const DT_RELA: i64 = 7;
/// `DT_RELASZ`: that table's size in bytes.
const DT_RELASZ: i64 = 8;
/// `DT_TEXTREL`: relocations may write a non-writable segment.
const DT_TEXTREL: i64 = 22;
/// `DT_FLAGS`: the object's flags (`DF_*`).
const DT_FLAGS: i64 = 30;
/// `DF_TEXTREL` in `DT_FLAGS`.
const DF_TEXTREL: u64 = 0x4;
/// The most dynamic entries read (a real object has well under a hundred).
const MAX_DYNAMIC_ENTRIES: usize = 4096;

/// One `Elf64_Dyn` entry (`d_un` read as its value).
#[repr(C)]
struct Dyn {
    tag: i64,
    value: u64,
}

/// Releases the resident pages of the relocation table of the object this
/// function is linked into (the addon, or a test executable), as the module
/// documentation describes. Returns the bytes advised (a multiple of the
/// page size; 0 when the object has no such table, it fails a check, or the
/// kernel refused the advice). Safe to call more than once.
pub fn release_loader_pages() -> usize {
    let Some(table) = own_relocation_table() else {
        return 0;
    };
    // SAFETY: `sysconf` only reads a constant of the system.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(0);
    if page == 0 {
        return 0;
    }
    let start = table.start.next_multiple_of(page);
    let end = table.end - table.end % page;
    if end <= start {
        return 0;
    }
    // SAFETY: `[start, end)` lies inside a read-only, never-written,
    // file-backed segment of a loaded object (checked in `relocation_table`):
    // dropping its pages only makes a later read fault them in again from
    // the file; no memory the process wrote is discarded.
    let advised = unsafe { libc::madvise(start as *mut c_void, end - start, libc::MADV_DONTNEED) };
    if advised == 0 {
        end - start
    } else {
        0
    }
}

/// The address range of the `DT_RELA` table of the object holding this
/// function, when it passes every check of the module documentation.
fn own_relocation_table() -> Option<Range<usize>> {
    let mut search = Search {
        address: release_loader_pages as *const () as usize,
        table: None,
    };
    // SAFETY: the callback only reads the program headers and the dynamic
    // section `dl_iterate_phdr` hands it, which stay mapped while it runs;
    // `data` points at `search`, alive for the whole call.
    unsafe {
        libc::dl_iterate_phdr(Some(visit), std::ptr::addr_of_mut!(search).cast());
    }
    search.table
}

/// What [`visit`] looks for and what it found.
struct Search {
    /// An address inside the object.
    address: usize,
    /// The object's checked table.
    table: Option<Range<usize>>,
}

/// `dl_iterate_phdr`'s callback: 1 (stop) at the object holding
/// `Search::address`, after noting its table in `Search::table`.
unsafe extern "C" fn visit(info: *mut libc::dl_phdr_info, size: usize, data: *mut c_void) -> i32 {
    if size < std::mem::size_of::<libc::dl_phdr_info>() {
        return 0;
    }
    // SAFETY: `data` is the `Search` given by `own_relocation_table`, and
    // `info` the loader's description of one object, of `size` bytes (at
    // least the whole struct, checked above), valid during the call.
    let (search, info) = unsafe { (&mut *data.cast::<Search>(), &*info) };
    if info.dlpi_phdr.is_null() {
        return 0;
    }
    // SAFETY: the loader gives `dlpi_phnum` program headers at `dlpi_phdr`.
    let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum.into()) };
    // Addresses wrap as the loader's do: an object loaded below its link
    // address has a load bias "below zero" (no panic may leave this
    // `extern "C"` callback).
    let base = info.dlpi_addr as usize;
    let range = |h: &libc::Elf64_Phdr| loaded(h, base);
    let holds_us = headers
        .iter()
        .any(|h| h.p_type == libc::PT_LOAD && range(h).contains(&search.address));
    if !holds_us {
        return 0;
    }
    search.table = relocation_table(headers, base, &range);
    1
}

/// Where segment `h` of an object loaded at `base` lies in memory
/// (`p_memsz`).
fn loaded(h: &libc::Elf64_Phdr, base: usize) -> Range<usize> {
    let start = base.wrapping_add(h.p_vaddr as usize);
    start..start.wrapping_add(h.p_memsz as usize)
}

/// The part of `PT_LOAD` `h` backed by the file (`p_filesz`): the loader
/// writes the zeros after it on the segment's last page, so only this part
/// is never written.
fn file_backed(h: &libc::Elf64_Phdr, base: usize) -> Range<usize> {
    let start = base.wrapping_add(h.p_vaddr as usize);
    start..start.wrapping_add(h.p_filesz as usize)
}

/// The checked `DT_RELA` range of the object of `headers`, loaded at `base`.
fn relocation_table(
    headers: &[libc::Elf64_Phdr],
    base: usize,
    range: &dyn Fn(&libc::Elf64_Phdr) -> Range<usize>,
) -> Option<Range<usize>> {
    let dynamic = headers.iter().find(|h| h.p_type == libc::PT_DYNAMIC)?;
    let table = dynamic_table(range(dynamic), base)?;
    let read_only = headers.iter().any(|h| {
        let r = file_backed(h, base);
        h.p_type == libc::PT_LOAD
            && h.p_flags & (libc::PF_W | libc::PF_X) == 0
            && r.start <= table.start
            && table.end <= r.end
    });
    let written = headers.iter().any(|h| {
        let r = range(h);
        matches!(
            h.p_type,
            libc::PT_GNU_RELRO | libc::PT_DYNAMIC | libc::PT_TLS
        ) && r.start < table.end
            && table.start < r.end
    });
    (read_only && !written).then_some(table)
}

/// The `DT_RELA` table's range from the dynamic section at `dynamic`; `None`
/// without one or with text relocations. The loader may have relocated the
/// address in place (glibc does): an address below `base` is taken as
/// relative to it.
fn dynamic_table(dynamic: Range<usize>, base: usize) -> Option<Range<usize>> {
    let entries = (dynamic.len() / std::mem::size_of::<Dyn>()).min(MAX_DYNAMIC_ENTRIES);
    // SAFETY: `PT_DYNAMIC` is mapped (inside a loaded segment) for
    // `p_memsz` bytes, aligned for `Elf64_Dyn`.
    let dyns = unsafe { std::slice::from_raw_parts(dynamic.start as *const Dyn, entries) };
    let (mut address, mut size) = (None, None);
    for entry in dyns.iter().take_while(|d| d.tag != DT_NULL) {
        match entry.tag {
            DT_RELA => address = Some(entry.value as usize),
            DT_RELASZ => size = Some(entry.value as usize),
            DT_TEXTREL => return None,
            DT_FLAGS if entry.value & DF_TEXTREL != 0 => return None,
            _ => {}
        }
    }
    let address = address?;
    let start = if address < base {
        base.wrapping_add(address)
    } else {
        address
    };
    Some(start..start.checked_add(size?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `Rss:` of the `/proc/self/smaps` mapping holding `address`, in KiB.
    fn resident_kib(address: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        for line in smaps.lines() {
            let first = line.split_whitespace().next().unwrap_or("");
            if let Some((from, to)) = first.split_once('-').filter(|_| !first.ends_with(':')) {
                let from = usize::from_str_radix(from, 16).unwrap_or(usize::MAX);
                let to = usize::from_str_radix(to, 16).unwrap_or(0);
                inside = (from..to).contains(&address);
            } else if inside && line.starts_with("Rss:") {
                return line.split_whitespace().nth(1).unwrap().parse().unwrap();
            }
        }
        panic!("no mapping holds {address:#x}");
    }

    fn checksum(range: &Range<usize>) -> u64 {
        // SAFETY: the table is mapped for its whole range (checked above).
        let bytes = unsafe { std::slice::from_raw_parts(range.start as *const u8, range.len()) };
        bytes
            .iter()
            .fold(0u64, |sum, b| sum.rotate_left(5) ^ u64::from(*b))
    }

    #[test]
    fn a_load_bias_below_zero_wraps_as_the_loader_does() {
        // An object loaded below its link address (glibc's `dlpi_addr`
        // wraps): the sums must wrap, never panic inside the callback.
        let header = libc::Elf64_Phdr {
            p_type: libc::PT_LOAD,
            p_flags: libc::PF_R,
            p_offset: 0,
            p_vaddr: 0x9000_0000_0000,
            p_paddr: 0x9000_0000_0000,
            p_filesz: 0x2000,
            p_memsz: 0x3000,
            p_align: 0x1000,
        };
        let base = 0usize.wrapping_sub(0x8fff_f000_0000);
        assert_eq!(loaded(&header, base), 0x1000_0000..0x1000_3000);
        assert_eq!(file_backed(&header, base), 0x1000_0000..0x1000_2000);
    }

    #[test]
    fn the_relocation_pages_leave_the_resident_set_and_read_back_unchanged() {
        let table = own_relocation_table().expect("a PIE test binary has a DT_RELA table");
        let before = checksum(&table); // every page of it resident
        let resident = resident_kib(table.start);
        let released = release_loader_pages();
        assert!(released > 0, "released {released} bytes of {table:x?}");
        let after = resident_kib(table.start);
        assert!(
            after < resident,
            "the mapping's Rss went from {resident} to {after} KiB after {released} bytes"
        );
        assert_eq!(checksum(&table), before, "the table reads back the same");
        // Formatting goes through relocated vtables: they were not touched.
        assert_eq!(format!("{:?}", Some(1)), "Some(1)");
    }
}
