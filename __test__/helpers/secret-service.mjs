// A real Secret Service for the OS keychain tests (host option
// `credentials: 'os'`, src/auth/keychain.rs): GNOME Keyring's daemon in a
// D-Bus session bus of its own (`dbus-run-session`), as on a headless
// machine: a temporary HOME holds its login keyring, created (or unlocked)
// with a known password by `gnome-keyring-daemon --unlock`. The host
// processes and `secret-tool` are clients of that bus, as an app is of the
// user's session bus. Closing the session (its stdin) ends the bus, and the
// daemon with it; the keyring file stays for the next session ("the next
// login").
//
// Debian packages: dbus-daemon (dbus-run-session), gnome-keyring, libsecret-tools
// (secret-tool); .ci/run installs them (system-packages).

import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync, chmodSync } from 'node:fs'
import { join } from 'node:path'

/** The Secret Service tools missing from PATH (none: the tests can run). */
export function missingSecretServiceTools() {
  return ['dbus-run-session', 'gnome-keyring-daemon', 'secret-tool']
    .filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
}

/** Why the Secret Service tests cannot run here, or `false` when they can. */
export function secretServiceSkip() {
  if (process.platform !== 'linux') return 'the Secret Service tests need Linux (D-Bus and GNOME Keyring); they run on Linux CI'
  const missing = missingSecretServiceTools()
  if (missing.length === 0) return false
  const why = `missing ${missing.join(', ')} (Debian: dbus-daemon, gnome-keyring, libsecret-tools; .ci/run installs them)`
  // CI installs them: there a missing tool is a failure, not a skip.
  if (process.env.AHP_REQUIRE_SECRET_SERVICE === '1') throw new Error(`AHP_REQUIRE_SECRET_SERVICE=1 but ${why}`)
  return why
}

/** The environment of a login under `home`: its own XDG folders (never the user's keyrings). */
export function loginEnv(home) {
  const runtime = join(home, 'run')
  mkdirSync(runtime, { recursive: true, mode: 0o700 })
  chmodSync(runtime, 0o700)
  return {
    HOME: home,
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_RUNTIME_DIR: runtime,
  }
}

// The session's script: start the keyring (unlocked with $KEYRING_PASSWORD,
// or only started when it is empty), print the bus address, then wait for
// stdin to close.
const SESSION = `
if [ -n "$KEYRING_PASSWORD" ]; then
  printf %s "$KEYRING_PASSWORD" | gnome-keyring-daemon --unlock --components=secrets >/dev/null || exit 3
else
  gnome-keyring-daemon --start --components=secrets >/dev/null || exit 3
fi
echo "bus $DBUS_SESSION_BUS_ADDRESS"
read _closed
`

/**
 * Starts a D-Bus session under `home` (see {@link loginEnv}) with GNOME
 * Keyring's Secret Service: unlocked with `password`, or, with `locked`,
 * started without unlocking (its login keyring, made by an earlier
 * session, stays locked, and no prompt can be shown). `config`: a
 * dbus-daemon configuration file instead of the session default. Resolves
 * `{address, env, secretTool(args, input?), close()}`; `env` is what a
 * process needs to use the session (its bus address and the login's
 * folders). Closed when the test ends.
 */
export async function startSecretService(t, { home, password = 'ahp-keyring-password', locked = false, config, withKeyring = true } = {}) {
  const login = loginEnv(home)
  const args = config ? [`--config-file=${config}`, '--', 'sh', '-c', withKeyring ? SESSION : SESSION_WITHOUT_KEYRING]
    : ['--', 'sh', '-c', withKeyring ? SESSION : SESSION_WITHOUT_KEYRING]
  const child = spawn('dbus-run-session', args, {
    env: { ...process.env, ...login, KEYRING_PASSWORD: locked ? '' : password },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (d) => { stderr += d })
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  const address = await new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`the D-Bus session did not start within 20 s: ${stderr}`)), 20_000)
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d
      const line = /^bus (.+)$/m.exec(out)
      if (line) {
        clearTimeout(timer)
        resolve(line[1].trim())
      }
    })
    exited.then(({ code }) => {
      clearTimeout(timer)
      reject(new Error(`the D-Bus session ended (${code}) before it started: ${stderr}`))
    })
  })
  const env = { ...login, DBUS_SESSION_BUS_ADDRESS: address }
  const session = {
    address,
    env,
    /** Runs `secret-tool` on this session; resolves `{status, stdout, stderr}`. */
    secretTool(toolArgs, input) {
      const run = spawnSync('secret-tool', toolArgs, { env: { ...process.env, ...env }, input, encoding: 'utf8', timeout: 20_000 })
      return { status: run.status, stdout: run.stdout, stderr: run.stderr }
    },
    /** Ends the session: the bus, and the keyring daemon with it. */
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin.end()
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
        await exited
        clearTimeout(timer)
      }
    },
  }
  t.after(() => session.close())
  return session
}

// A session bus with no Secret Service: nothing started, nothing activatable.
const SESSION_WITHOUT_KEYRING = `
echo "bus $DBUS_SESSION_BUS_ADDRESS"
read _closed
`

/**
 * A dbus-daemon session configuration without service directories: no
 * `org.freedesktop.secrets` can be activated on it (GNOME Keyring's
 * installed `.service` file would otherwise start one on demand).
 */
export function busConfigWithoutServices(dir) {
  const file = join(dir, 'session-without-services.conf')
  writeFileSync(file, `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=${dir}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`)
  return file
}
