// removeFile and removeDir (host/fs.ts), the launch path's stand-ins for fs.rmSync: a missing path
// is fine, a symlink is removed and never followed, a directory with folders inside still goes whole.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { removeDir, removeFile } from '../../src/host/fs.js'
import { tempDir } from '../helpers/temp.js'

const temp = (): string => tempDir('cb-remove-')

describe('removeFile and removeDir', () => {
  test('removeFile: a file goes, a missing one is fine, a directory is an error (as fs.rmSync without recursive)', () => {
    const dir = temp()
    fs.writeFileSync(path.join(dir, 'f'), 'x')
    removeFile(path.join(dir, 'f'))
    expect(fs.existsSync(path.join(dir, 'f'))).toBe(false)
    expect(() => removeFile(path.join(dir, 'f'))).not.toThrow()
    fs.mkdirSync(path.join(dir, 'd'))
    expect(() => removeFile(path.join(dir, 'd'))).toThrow()
    expect(fs.existsSync(path.join(dir, 'd'))).toBe(true)
  })

  test('removeDir: files and symlinks go, what the links lead to stays; folders inside go too; a missing one is fine', () => {
    const dir = temp()
    const outside = path.join(dir, 'outside')
    fs.mkdirSync(outside)
    fs.writeFileSync(path.join(outside, 'keep'), 'keep')
    for (const [store, nested] of [['flat', false], ['deep', true]] as const) {
      const p = path.join(dir, store)
      fs.mkdirSync(p)
      fs.writeFileSync(path.join(p, '.credentials.json'), '{}')
      fs.symlinkSync(outside, path.join(p, 'to-dir'))
      fs.symlinkSync(path.join(outside, 'keep'), path.join(p, 'to-file'))
      if (nested) fs.mkdirSync(path.join(p, 'a/b'), { recursive: true })
      removeDir(p)
      expect(fs.existsSync(p)).toBe(false)
    }
    expect(fs.readFileSync(path.join(outside, 'keep'), 'utf8')).toBe('keep')
    expect(() => removeDir(path.join(dir, 'never-there'))).not.toThrow()
  })

  test('round 89: removeDir of a folder replaced by a link to another folder empties nothing there (a login folder swapped for a link to ~/.ssh)', () => {
    const dir = temp()
    const ssh = path.join(dir, 'ssh')
    fs.mkdirSync(ssh)
    fs.writeFileSync(path.join(ssh, 'id_ed25519'), 'key')
    fs.symlinkSync(ssh, path.join(dir, 'place'))
    removeDir(path.join(dir, 'place'))
    expect(fs.readFileSync(path.join(ssh, 'id_ed25519'), 'utf8')).toBe('key')
  })
})
