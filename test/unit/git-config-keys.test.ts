// isDataKey (host/git-configs.ts) decides which config values are never taken for programs: it
// must say exactly what the regular expression it replaced said, over keys of every shape.
import { describe, expect, test } from 'vitest'
import { isDataKey } from '../../src/host/git-configs.js'

/** The regular expression isDataKey replaced (slow to compile at a launch's first use), as it was. */
const REFERENCE = /^(remote\..*\.(url|pushurl|fetch|push|mirror|tagopt|prune|proxy)|branch\..*|url\..*|http\..*|user\..*|author\..*|committer\..*|init\.defaultbranch|core\.(worktree|excludesfile|attributesfile|hookspath|bare|filemode|repositoryformatversion|logallrefupdates|ignorecase|precomposeunicode|symlinks|autocrlf|eol|abbrev|compression)|commit\.template|safe\..*|submodule\..*\.(url|path|branch|active|ignore)|include\.path|includeif\..*|extensions\..*|gc\..*|pack\..*|fetch\..*|pull\..*|push\..*|rebase\..*|color\..*|log\..*|status\..*|advice\..*|maintenance\..*|format\..*|blame\..*|merge\.conflictstyle|diff\.(algorithm|renames|colormoved|mnemonicprefix|noprefix|submodule))$/

const SECTIONS = ['remote', 'branch', 'url', 'http', 'user', 'author', 'committer', 'init', 'core', 'commit', 'safe', 'submodule', 'include', 'includeif', 'extensions', 'gc', 'pack', 'fetch', 'pull', 'push', 'rebase', 'color', 'log', 'status', 'advice', 'maintenance', 'format', 'blame', 'merge', 'diff', 'alias', 'pager', 'gpg', 'filter', 'sequence', 'credential', 'remotes', 'urls', 'corex', 'xcore', '']
const NAMES = ['url', 'pushurl', 'fetch', 'push', 'mirror', 'tagopt', 'prune', 'proxy', 'receivepack', 'uploadpack', 'path', 'branch', 'active', 'ignore', 'update', 'defaultbranch', 'worktree', 'excludesfile', 'attributesfile', 'hookspath', 'bare', 'filemode', 'repositoryformatversion', 'logallrefupdates', 'ignorecase', 'precomposeunicode', 'symlinks', 'autocrlf', 'eol', 'abbrev', 'compression', 'fsmonitor', 'pager', 'editor', 'sshcommand', 'template', 'conflictstyle', 'algorithm', 'renames', 'colormoved', 'mnemonicprefix', 'noprefix', 'submodule', 'external', 'textconv', 'command', 'x', '', 'urlx', 'xurl']
const SUBSECTIONS = [undefined, '', 'origin', 'a.b', 'x.url', '.', '..', 'url', 'With Space', 'ünï']

function* keys(): Generator<string> {
  for (const section of SECTIONS) {
    yield section
    for (const name of NAMES) {
      for (const sub of SUBSECTIONS) yield sub === undefined ? `${section}.${name}` : `${section}.${sub}.${name}`
    }
  }
}

describe('isDataKey', () => {
  test('says what the regular expression said, for every key of the corpus', () => {
    const differ = [...keys()].filter(key => isDataKey(key) !== REFERENCE.test(key))
    expect(differ).toEqual([])
  })

  test('the corpus holds both kinds: data keys, and keys whose values may run', () => {
    const all = [...keys()]
    expect(all.length).toBeGreaterThan(10_000)
    expect(all.filter(key => REFERENCE.test(key)).length).toBeGreaterThan(1_000)
    expect(['core.fsmonitor', 'remote.origin.receivepack', 'submodule.m.update', 'alias.x', 'core.x.worktree', 'remote.url'].map(isDataKey)).toEqual([false, false, false, false, false, false])
    expect(['remote..url', 'remote.a.b.url', 'submodule.m.path', 'branch.', 'core.worktree', 'diff.submodule'].map(isDataKey)).toEqual([true, true, true, true, true, true])
  })
})
