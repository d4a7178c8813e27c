// SessionServers' directory of sockets: made exclusively, and removed at the end only while it is
// the directory made, never recursively, never through a symlink (real files in a temp dir).
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { SessionServers } from '../../src/commands/session-servers.js'
import { tempDir } from '../helpers/temp.js'

function victim(root: string): string {
  const dir = path.join(root, 'victim')
  fs.mkdirSync(dir)
  for (const name of ['proxy.sock', 'id_ed25519']) fs.writeFileSync(path.join(dir, name), 'precious')
  return dir
}

describe('the directory of the session sockets', () => {
  test('removed at the end with what the servers left in it; its parent made when missing', async () => {
    const dir = path.join(tempDir(), 'run', 'claudebox-net-0123')
    const servers = new SessionServers()
    servers.makeSocketsDir(dir)
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
    fs.writeFileSync(path.join(dir, 'api.sock'), '')
    expect(await servers.finish()).toEqual([])
    expect(fs.existsSync(dir)).toBe(false)
  })

  test('one that exists already (made by anyone else) is refused', () => {
    const dir = path.join(tempDir(), 'claudebox-net-0123')
    fs.mkdirSync(dir)
    expect(() => new SessionServers().makeSocketsDir(dir)).toThrow(/cannot create the directory of the session's sockets .*EEXIST/)
  })

  test('swapped for a symlink to a host directory: nothing there is removed', async () => {
    const root = tempDir()
    const target = victim(root)
    const dir = path.join(root, 'claudebox-net-0123')
    const servers = new SessionServers()
    servers.makeSocketsDir(dir)
    fs.rmdirSync(dir)
    fs.symlinkSync(target, dir)
    await servers.finish()
    expect(fs.readdirSync(target).sort()).toEqual(['id_ed25519', 'proxy.sock'])
    expect(fs.lstatSync(dir).isSymbolicLink()).toBe(true)
  })

  test('swapped for another directory: left as it is, not emptied', async () => {
    const root = tempDir()
    const dir = path.join(root, 'claudebox-net-0123')
    const servers = new SessionServers()
    servers.makeSocketsDir(dir)
    fs.renameSync(dir, path.join(root, 'moved'))
    fs.renameSync(victim(root), dir)
    await servers.finish()
    expect(fs.readdirSync(dir).sort()).toEqual(['id_ed25519', 'proxy.sock'])
  })

  test('with something else in it: the sockets go, the rest and the directory stay (never recursive)', async () => {
    const dir = path.join(tempDir(), 'claudebox-net-0123')
    const servers = new SessionServers()
    servers.makeSocketsDir(dir)
    fs.writeFileSync(path.join(dir, 'proxy.sock'), '')
    fs.mkdirSync(path.join(dir, 'sub'))
    fs.writeFileSync(path.join(dir, 'sub', 'file'), 'x')
    await servers.finish()
    expect(fs.readdirSync(dir)).toEqual(['sub'])
  })

  test("what a killed launcher left beside it goes at the next launch; a live launcher's, another boot's or pid namespace's, a symlink and other names stay", async () => {
    const root = tempDir()
    const gone = spawnSync('true').pid // a pid that has ended
    const left = path.join(root, `claudebox-net-0badc0de-${gone}-0123456789ab`)
    fs.mkdirSync(left)
    fs.writeFileSync(path.join(left, 'proxy.sock'), '')
    const live = path.join(root, `claudebox-net-0badc0de-${process.ppid}-0123456789ab`)
    const elsewhere = path.join(root, `claudebox-net-12345678-${gone}-0123456789ab`) // another boot or pid namespace
    fs.mkdirSync(elsewhere)
    fs.mkdirSync(live)
    const target = victim(root)
    fs.symlinkSync(target, path.join(root, `claudebox-net-0badc0de-${gone}-ba9876543210`))
    fs.mkdirSync(path.join(root, 'claudebox-net-other'))
    const servers = new SessionServers()
    servers.makeSocketsDir(path.join(root, `claudebox-net-0badc0de-${process.pid}-aaaaaaaaaaaa`))
    expect(fs.readdirSync(root).sort()).toEqual([`claudebox-net-0badc0de-${gone}-ba9876543210`, `claudebox-net-0badc0de-${process.pid}-aaaaaaaaaaaa`, `claudebox-net-0badc0de-${process.ppid}-0123456789ab`, path.basename(elsewhere), 'claudebox-net-other', 'victim'].sort())
    expect(fs.readdirSync(target).sort()).toEqual(['id_ed25519', 'proxy.sock'])
    await servers.finish()
  })
})
