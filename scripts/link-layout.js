#!/usr/bin/env node
'use strict'
// The linker of the profile-guided release build on Linux x64
// (scripts/build-addon.js, "PGO"): cargo calls it in place of the cross
// toolchain's gcc (CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER), and it
// calls that gcc (AHP_LINK_LAYOUT_CC) with the same arguments and one more:
// a GNU ld script that places the functions listed in
// AHP_LINK_LAYOUT_FUNCTIONS (one function per line, the functions the PGO
// training's `rss` scenario ran: start a host, connect a stdio server,
// list, call) first, in an output section `.text.core` of their own, before
// the rest of `.text`.
//
// Why: the kernel maps a shared library's code into a process 64 KiB at a
// time around each page it runs (fault-around), so a function that runs
// once, in a block of code that does not, makes the whole block resident.
// With the code a host runs on its common path side by side, a process
// that uses the addon keeps about that much of it resident instead of
// ~6 MiB of blocks (docs/benchmark.md, issue 28, "RSS").
//
// The script names exact objects and section names (`.text.<symbol>`, with
// PGO's `.hot.` / `.unlikely.` prefix and ThinLTO's `.llvm.<n>` suffix where
// the compiler gave them), read from the objects this link is given
// (AHP_LINK_LAYOUT_READELF, `readelf -SW`): ld matches a name without
// wildcards by lookup, where a pattern would be tried against every section.
// With no list, or no section of it in the objects, the link is the plain
// one. Errors from readelf fail the link, naming the object.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

/** The arguments of a gcc `@file` (one per line as rustc writes them, `\`-escaped). */
function expand(args) {
  const out = []
  for (const arg of args) {
    if (!arg.startsWith('@') || !fs.existsSync(arg.slice(1))) {
      out.push(arg)
      continue
    }
    for (const line of fs.readFileSync(arg.slice(1), 'utf8').split('\n')) {
      if (line) out.push(line.replace(/\\(.)/g, '$1'))
    }
  }
  return out
}

/**
 * Adds the `.text*` sections of object `file` to `into`, by symbol:
 * `.text.hot.F.llvm.3` → F → [{file, section}].
 */
function textSections(readelf, file, into) {
  const run = spawnSync(readelf, ['-SW', file], { encoding: 'utf8', maxBuffer: 256 << 20 })
  if (run.status !== 0) {
    throw new Error(`link-layout: ${readelf} -SW ${file} failed: ${run.stderr || run.error?.message}`)
  }
  for (const m of run.stdout.matchAll(/\]\s+(\.text\.\S+)\s+PROGBITS/g)) {
    const section = m[1]
    const symbol = section.replace(/^\.text\.(hot\.|unlikely\.)?/, '').replace(/\.llvm\.\d+$/, '')
    const list = into.get(symbol)
    if (list) list.push({ file, section })
    else into.set(symbol, [{ file, section }])
  }
}

/**
 * The module object `file` holds, as far as its name says: rustc names the
 * object of a module `<crate>.<module>.rcgu.o`, and an upstream crate's
 * module after ThinLTO `<crate>.<upstream>-<hash>.<module>.rcgu.o.rcgu.o`
 * (the module's own name ends in `.rcgu.o`); the name without those endings.
 */
function moduleOf(file) {
  return path.basename(file).replace(/(\.rcgu\.o)+$|\.o$/, '')
}

/**
 * The ld script text placing the sections of `functions` first, in list
 * order; undefined when none is found. An entry is a symbol, or
 * `<module>;<symbol>` for a local function (LLVM's name for it in a
 * profile): then only the copy in the object of that module (moduleOf)
 * is placed, not the other modules' copies of the same symbol.
 */
function layoutScript(functions, sections) {
  const lines = []
  const seen = new Set()
  for (const entry of functions) {
    const at = entry.lastIndexOf(';')
    const symbol = entry.slice(at + 1)
    const module = at < 0 ? undefined : entry.slice(0, at)
    for (const { file, section } of sections.get(symbol) ?? []) {
      if (module && !moduleOf(file).endsWith(module)) continue
      const key = `${file}\0${section}`
      if (seen.has(key)) continue
      seen.add(key)
      lines.push(`    "${file}"("${section}")`)
    }
  }
  if (!lines.length) return undefined
  return `SECTIONS\n{\n  .text.core :\n  {\n${lines.join('\n')}\n  }\n}\nINSERT BEFORE .text;\n`
}

function main() {
  const cc = process.env.AHP_LINK_LAYOUT_CC
  if (!cc) {
    console.error('link-layout: AHP_LINK_LAYOUT_CC (the real linker driver) is not set')
    process.exit(2)
  }
  const args = process.argv.slice(2)
  const extra = []
  let scratch
  const listFile = process.env.AHP_LINK_LAYOUT_FUNCTIONS
  if (listFile && fs.existsSync(listFile)) {
    const functions = fs.readFileSync(listFile, 'utf8').split('\n').filter(Boolean)
    const readelf = process.env.AHP_LINK_LAYOUT_READELF || 'readelf'
    const sections = new Map()
    for (const arg of expand(args)) {
      if (arg.endsWith('.o') && fs.existsSync(arg)) textSections(readelf, arg, sections)
    }
    const script = layoutScript(functions, sections)
    if (script) {
      scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ahp-link-layout-'))
      const file = path.join(scratch, 'layout.ld')
      fs.writeFileSync(file, script)
      if (process.env.AHP_LINK_LAYOUT_KEEP) fs.copyFileSync(file, process.env.AHP_LINK_LAYOUT_KEEP)
      extra.push(`-Wl,-T,${file}`)
    }
  }
  const run = spawnSync(cc, [...args, ...extra], { stdio: 'inherit' })
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true })
  process.exit(run.status ?? 1)
}

module.exports = { expand, layoutScript, textSections }

if (require.main === module) {
  try {
    main()
  } catch (e) {
    console.error(e.message)
    process.exit(1)
  }
}
