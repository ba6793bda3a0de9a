// The code layout of the PGO release build (scripts/link-layout.js, the
// linker cargo calls; scripts/build-addon.js `ranFunctions`, the list it
// reads): a real link with this machine's C compiler and readelf of two
// objects named the way rustc names them, checked with nm.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const require = createRequire(import.meta.url)
const LINKER = require.resolve('../scripts/link-layout.js')
const { expand, inputObjects, responseFile, withoutLld } = require('../scripts/link-layout.js')
const { ranFunctions } = require('../scripts/build-addon.js')

/** Two objects, each with a local `helper` (mod2's is the larger), as Rust makes a local copy of a generic function per codegen unit. */
function objects(dir) {
  const table = (name) => `static const int ${name}[64] = { ${Array.from({ length: 64 }, (_, i) => i * 7 + name.length).join(', ')} };\n`
  const one = `static int helper(int x) { return x + 1; }\nint f_a(int x) { return helper(x) * 3; }\n${table('tbl_b')}int f_b(int x) { return helper(x) * tbl_b[x & 63]; }\n`
  const two = `static int helper(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * x; return s; }\n${table('tbl_c')}int f_c(int x) { return helper(x) + tbl_c[x & 63]; }\n`
  const files = []
  // rustc's names: a module of the crate being linked, and an upstream
  // crate's module after ThinLTO (its module name ends in `.rcgu.o` itself).
  const names = [['mod1', 'napi.crate.mod1.rcgu.o', one], ['mod2', 'napi.up-a2.crate.mod2.rcgu.o.rcgu.o', two]]
  for (const [name, object, src] of names) {
    writeFileSync(join(dir, `${name}.c`), src)
    const obj = join(dir, object)
    execFileSync('cc', ['-O1', '-fPIC', '-fno-inline', '-ffunction-sections', '-fdata-sections', '-c', join(dir, `${name}.c`), '-o', obj])
    files.push(obj)
  }
  return files
}

/** `nm -S -n` of `lib`: [{addr, size, type, name}] of its text and read-only data symbols. */
function symbols(lib) {
  return execFileSync('nm', ['-S', '-n', lib], { encoding: 'utf8' }).split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((p) => p.length === 4 && /[tTrR]/.test(p[2]))
    .map(([addr, size, type, name]) => ({ addr: parseInt(addr, 16), size: parseInt(size, 16), type, name }))
}

/** The [start, end) of `lib`'s section `name` (`.text.core`), or undefined. */
function coreSection(lib, name = '.text.core') {
  const line = execFileSync('readelf', ['-SW', lib], { encoding: 'utf8' }).split('\n').find((l) => l.includes(`] ${name} `))
  if (!line) return undefined
  const [addr, , size] = line.split(/PROGBITS\s+/)[1].trim().split(/\s+/)
  return [parseInt(addr, 16), parseInt(addr, 16) + parseInt(size, 16)]
}

/** The flags ('R', 'R E', …) of the LOAD segment of `lib` that holds section `name`. */
function segmentOf(lib, name) {
  const out = execFileSync('readelf', ['-lW', lib], { encoding: 'utf8' })
  const loads = out.split('\n').filter((l) => /^\s+LOAD\s/.test(l)).map((l) => l.trim().split(/\s+/).slice(6, -1).join(' '))
  const mapping = out.slice(out.indexOf('Section to Segment mapping')).split('\n').filter((l) => /^\s+\d\d\s/.test(l))
  const at = mapping.findIndex((l) => l.trim().split(/\s+/).slice(1).includes(name))
  const segments = out.split('\n').filter((l) => /^\s+[A-Z_]+\s+0x/.test(l)).map((l) => l.trim().split(/\s+/)[0])
  assert.ok(at >= 0, `${name} is in a segment`)
  assert.equal(segments[at], 'LOAD', `${name} is in a LOAD segment`)
  return loads[segments.slice(0, at).filter((t) => t === 'LOAD').length]
}

function link(dir, files, list, extraEnv = {}) {
  const lib = join(dir, list ? 'laid-out.so' : 'plain.so')
  const env = { ...process.env, AHP_LINK_LAYOUT_CC: 'cc', AHP_LINK_LAYOUT_READELF: 'readelf', ...extraEnv }
  delete env.AHP_LINK_LAYOUT_FUNCTIONS
  if (list) {
    writeFileSync(join(dir, 'functions.txt'), list.join('\n') + '\n')
    env.AHP_LINK_LAYOUT_FUNCTIONS = join(dir, 'functions.txt')
  }
  execFileSync(process.execPath, [LINKER, '-shared', '-o', lib, ...files], { env, stdio: ['ignore', 'ignore', 'pipe'] })
  return lib
}

test('the listed functions come first, in list order, in .text.core; a local one only from its own module', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ahp-link-layout-'))
  try {
    const files = objects(dir)
    const lib = link(dir, files, ['f_c', 'crate.mod2;helper', 'f_a', 'not_in_any_object'])
    const core = coreSection(lib)
    assert.ok(core, '.text.core exists')
    const syms = symbols(lib)
    const inCore = syms.filter((s) => /[tT]/.test(s.type) && s.addr >= core[0] && s.addr < core[1])
    assert.deepEqual(inCore.map((s) => s.name), ['f_c', 'helper', 'f_a'])
    const helpers = syms.filter((s) => s.name === 'helper')
    assert.equal(helpers.length, 2)
    const [coreHelper] = inCore.filter((s) => s.name === 'helper')
    const other = helpers.find((s) => s !== coreHelper && s.addr !== coreHelper.addr)
    assert.ok(coreHelper.size > other.size, 'the copy placed is mod2\'s (the larger), not mod1\'s')
    assert.ok(other.addr >= core[1], 'mod1\'s helper stays in .text')
    assert.ok(syms.find((s) => s.name === 'f_b').addr >= core[1], 'an unlisted function stays in .text')
    assert.equal(segmentOf(lib, '.text.core'), segmentOf(lib, '.text'), '.text.core is in the code segment')
    assert.equal(segmentOf(lib, '.text.core'), 'R E')
    assert.equal(segmentOf(lib, '.rodata'), 'R', 'read-only data stays out of the code segment')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('with no list, or none of it in the objects, the link is the plain one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ahp-link-layout-'))
  try {
    const files = objects(dir)
    assert.equal(coreSection(link(dir, files)), undefined)
    assert.equal(coreSection(link(dir, files, ['nothing_here', 'crate.mod9;helper'])), undefined)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a gcc @file of rustc is read one argument per line, backslash escapes undone', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ahp-link-layout-'))
  try {
    const file = join(dir, 'linker-arguments')
    writeFileSync(file, '-shared\n/tmp/a\\ b.o\n-Wl,--as-needed\n')
    assert.deepEqual(expand(['-m64', `@${file}`, 'x.o']), ['-m64', '-shared', '/tmp/a b.o', '-Wl,--as-needed', 'x.o'])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('ranFunctions keeps the functions of an IR profile with a counter above 0, local ones with their module', () => {
  const text = [
    '# IR level Instrumentation Flag', ':ir',
    'crate.mod2;helper', '# Func Hash:', '1', '# Num Counters:', '2', '# Counter Values:', '0', '4', '',
    'never_ran', '# Func Hash:', '2', '# Num Counters:', '1', '# Counter Values:', '0', '',
    'f_c', '# Func Hash:', '3', '# Num Counters:', '3', '# Counter Values:', '1', '0', '0',
    '# Num Value Kinds:', '1', '# ValueKind = IPVK_IndirectCallTarget:', '0', '# NumValueSites:', '1', '0', '',
  ].join('\n')
  assert.deepEqual(ranFunctions(text), ['crate.mod2;helper', 'f_c'])
})

test('rust-lld is taken out of the arguments (the ld script is for GNU ld); a comma in TMPDIR does not split the script path', () => {
  assert.deepEqual(
    withoutLld(['-m64', '-B/r/lib/rustlib/x86_64-unknown-linux-gnu/bin/gcc-ld', '-fuse-ld=lld', 'a.o', '-B', '/r/bin/gcc-ld/', '-Bstatic', '-o', 'x.so']),
    ['-m64', 'a.o', '-Bstatic', '-o', 'x.so'],
  )
  const dir = mkdtempSync(join(tmpdir(), 'ahp-link-layout-'))
  try {
    const files = objects(dir)
    const commaTmp = join(dir, 'tmp,with,commas')
    execFileSync('mkdir', ['-p', commaTmp])
    const lib = link(dir, files, ['f_c'], { TMPDIR: commaTmp })
    assert.ok(coreSection(lib), 'linked with the layout')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the arguments go to the driver as an @file that reads back the same; the -o output is not read as an input', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ahp-link-layout-'))
  try {
    const args = ['-shared', '/tmp/a b.o', 'back\\slash', "it's", 'say "hi"', '-Wl,-z,now']
    const file = join(dir, 'args')
    writeFileSync(file, responseFile(args))
    assert.deepEqual(expand([`@${file}`]), args)
    const [one] = objects(dir)
    const out = join(dir, 'stale.o')
    writeFileSync(out, 'not an object')
    assert.deepEqual(inputObjects(['-r', one, '-o', out]), [one])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
