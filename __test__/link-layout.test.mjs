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
const { expand } = require('../scripts/link-layout.js')
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

function link(dir, files, list) {
  const lib = join(dir, list ? 'laid-out.so' : 'plain.so')
  const env = { ...process.env, AHP_LINK_LAYOUT_CC: 'cc', AHP_LINK_LAYOUT_READELF: 'readelf' }
  delete env.AHP_LINK_LAYOUT_FUNCTIONS
  if (list) {
    writeFileSync(join(dir, 'functions.txt'), list.join('\n') + '\n')
    env.AHP_LINK_LAYOUT_FUNCTIONS = join(dir, 'functions.txt')
  }
  execFileSync(process.execPath, [LINKER, '-shared', '-o', lib, ...files], { env, stdio: ['ignore', 'ignore', 'pipe'] })
  return lib
}

test('the listed functions come first, in list order, in .text.core, and the data they read in .rodata.core; a local one only from its own module', () => {
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
    const data = coreSection(lib, '.rodata.core')
    assert.ok(data, '.rodata.core exists')
    const at = (name) => syms.find((s) => s.name === name).addr
    assert.ok(at('tbl_c') >= data[0] && at('tbl_c') < data[1], 'the table f_c reads is in .rodata.core')
    assert.ok(at('tbl_b') >= data[1] || at('tbl_b') < data[0], 'the table of unlisted f_b is not')
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
