// Reads what the packaging tests need from an ELF64 little-endian shared
// object (the Linux .node addon), without binutils: section names, and the
// GLIBC symbol versions it requires (`.gnu.version_r`, i.e. the
// `GLIBC_x.y` entries `objdump -T` shows).

import { readFileSync } from 'node:fs'

/** Parses the section headers of `file`: `[{ name, type, offset, size, link }]`. */
export function elfSections(file) {
  const b = readFileSync(file)
  if (b.readUInt32BE(0) !== 0x7f454c46) throw new Error(`${file}: not an ELF file`)
  if (b[4] !== 2 || b[5] !== 1) throw new Error(`${file}: not ELF64 little-endian`)
  const shoff = Number(b.readBigUInt64LE(0x28))
  const shentsize = b.readUInt16LE(0x3a)
  const shnum = b.readUInt16LE(0x3c)
  const shstrndx = b.readUInt16LE(0x3e)
  const raw = []
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize
    raw.push({
      nameOffset: b.readUInt32LE(o),
      type: b.readUInt32LE(o + 4),
      offset: Number(b.readBigUInt64LE(o + 0x18)),
      size: Number(b.readBigUInt64LE(o + 0x20)),
      link: b.readUInt32LE(o + 0x28),
    })
  }
  const names = raw[shstrndx]
  const cstr = (base, at) => {
    const end = b.indexOf(0, base + at)
    return b.toString('latin1', base + at, end)
  }
  return { buffer: b, sections: raw.map((s) => ({ ...s, name: cstr(names.offset, s.nameOffset) })) }
}

/** Every version name the object requires from its shared libraries (`GLIBC_2.17`, `GCC_3.0`, …). */
export function requiredVersions(file) {
  const { buffer: b, sections } = elfSections(file)
  const SHT_GNU_VERNEED = 0x6ffffffe
  const need = sections.find((s) => s.type === SHT_GNU_VERNEED)
  if (!need) return []
  const strtab = sections[need.link]
  const out = []
  let at = need.offset
  for (;;) {
    const cnt = b.readUInt16LE(at + 2)
    const aux = b.readUInt32LE(at + 8)
    const next = b.readUInt32LE(at + 12)
    let a = at + aux
    for (let i = 0; i < cnt; i++) {
      const name = b.readUInt32LE(a + 8)
      const end = b.indexOf(0, strtab.offset + name)
      out.push(b.toString('latin1', strtab.offset + name, end))
      const anext = b.readUInt32LE(a + 12)
      if (anext === 0) break
      a += anext
    }
    if (next === 0) break
    at += next
  }
  return out
}

/** The highest `GLIBC_x.y` version `file` requires, as `[x, y]` (null when none). */
export function glibcFloor(file) {
  const versions = requiredVersions(file)
    .map((v) => /^GLIBC_(\d+)\.(\d+)(?:\.(\d+))?$/.exec(v))
    .filter(Boolean)
    .map((m) => [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)])
  versions.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2])
  return versions.length ? versions[versions.length - 1] : null
}
