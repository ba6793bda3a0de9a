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
// that uses the addon keeps about that much of it resident: 3.4 MiB of
// text after connecting and 100 calls instead of 6.3 MiB
// (docs/benchmark.md, issue 28, "RSS"). The read-only data those functions
// refer to, laid out the same way, changed nothing measurable, so it is not.
//
// The script names exact objects and section names (`.text.<symbol>`, with
// PGO's `.hot.` / `.unlikely.` prefix and ThinLTO's `.llvm.<n>` suffix where
// the compiler gave them), read from the objects this link is given
// (AHP_LINK_LAYOUT_READELF, `readelf -SW`): ld matches
// a name without wildcards by lookup, where a pattern would be tried
// against every section. With no list, or no section of it in the objects,
// the link is the plain one. Errors from readelf fail the link, naming the
// object. AHP_LINK_LAYOUT_KEEP=<file> keeps a copy of the script there.

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
 * Adds the `.text.*` sections of object `file` (`readelf -SW`) to
 * `objects.text`, by symbol: `.text.hot.F.llvm.3` → F → [{file, section}].
 */
function readObject(readelf, file, objects) {
  const run = spawnSync(readelf, ['-SW', file], { encoding: 'utf8', maxBuffer: 256 << 20 })
  if (run.status !== 0) {
    throw new Error(`link-layout: ${readelf} -SW ${file} failed: ${run.stderr || run.error?.message}`)
  }
  for (const m of run.stdout.matchAll(/\]\s+(\.text\.\S+)\s+PROGBITS/g)) {
    const section = m[1]
    const symbol = section.replace(/^\.text\.(hot\.|unlikely\.)?/, '').replace(/\.llvm\.\d+$/, '')
    const list = objects.text.get(symbol)
    if (list) list.push({ file, section })
    else objects.text.set(symbol, [{ file, section }])
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
function layoutScript(functions, objects) {
  const lines = []
  const seen = new Set()
  for (const entry of functions) {
    const at = entry.lastIndexOf(';')
    const symbol = entry.slice(at + 1)
    const module = at < 0 ? undefined : entry.slice(0, at)
    for (const { file, section } of objects.text.get(symbol) ?? []) {
      if (module && !moduleOf(file).endsWith(module)) continue
      const key = `${file}\0${section}`
      // A name ld would read as a pattern or as `archive:member` even when
      // quoted stays where the default script puts it.
      if (seen.has(key) || /["[\]*?:]/.test(key)) continue
      seen.add(key)
      lines.push(`    "${file}"("${section}")`)
    }
  }
  if (!lines.length) return undefined
  return `SECTIONS\n{\n  .text.core :\n  {\n${lines.join('\n')}\n  }\n}\nINSERT BEFORE .text;\n`
}

/**
 * `args` (expanded) without what turns rust-lld on: rustc adds
 * `-B<sysroot>/…/gcc-ld -fuse-ld=lld` for a linker whose name it does not
 * know to be gcc (Rust 1.90+ links x86_64 Linux with lld by default), and
 * this script's ld script is for GNU ld (the cross toolchain's gcc 4.8.5
 * refuses the option, and rustc would link again without it).
 */
function withoutLld(args) {
  const out = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    if (arg === '-fuse-ld=lld') continue
    if (arg === '-B' && /gcc-ld\/?$/.test(args[i + 1] ?? '')) {
      i++
      continue
    }
    if (arg.startsWith('-B') && /gcc-ld\/?$/.test(arg)) continue
    out.push(arg)
  }
  return out
}

/** `args` as a gcc `@file` (one per line; whitespace, quotes and `\` escaped). */
function responseFile(args) {
  return args.map((a) => a.replace(/[\\\s'"]/g, (c) => `\\${c}`)).join('\n') + '\n'
}

/** The input objects among `args`: `.o` files that exist, not the output of `-o`. */
function inputObjects(args) {
  return args.filter((arg, i) => arg.endsWith('.o') && args[i - 1] !== '-o' && fs.existsSync(arg))
}

function main() {
  const cc = process.env.AHP_LINK_LAYOUT_CC
  if (!cc) {
    console.error('link-layout: AHP_LINK_LAYOUT_CC (the real linker driver) is not set')
    process.exit(2)
  }
  const args = withoutLld(expand(process.argv.slice(2)))
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ahp-link-layout-'))
  try {
    const extra = []
    const listFile = process.env.AHP_LINK_LAYOUT_FUNCTIONS
    if (listFile && fs.existsSync(listFile)) {
      const functions = fs.readFileSync(listFile, 'utf8').split('\n').filter(Boolean)
      const readelf = process.env.AHP_LINK_LAYOUT_READELF || 'readelf'
      const objects = { text: new Map() }
      for (const object of inputObjects(args)) readObject(readelf, object, objects)
      const script = layoutScript(functions, objects)
      if (script) {
        const file = path.join(scratch, 'layout.ld')
        fs.writeFileSync(file, script)
        if (process.env.AHP_LINK_LAYOUT_KEEP) fs.copyFileSync(file, process.env.AHP_LINK_LAYOUT_KEEP)
        extra.push('-Xlinker', '-T', '-Xlinker', file) // not -Wl: a comma in the path would split it
      }
    }
    const argsFile = path.join(scratch, 'linker-arguments')
    fs.writeFileSync(argsFile, responseFile([...args, ...extra]))
    const run = spawnSync(cc, [`@${argsFile}`], { stdio: 'inherit' })
    if (run.error) throw new Error(`link-layout: cannot run ${cc}: ${run.error.message}`)
    if (run.signal) throw new Error(`link-layout: ${cc} was killed by ${run.signal}`)
    return run.status
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

module.exports = { expand, inputObjects, layoutScript, readObject, responseFile, withoutLld }

if (require.main === module) {
  try {
    process.exit(main())
  } catch (e) {
    console.error(e.message)
    process.exit(1)
  }
}
