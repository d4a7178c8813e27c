// --sessions: lists this project's Claude conversations, newest first, across its worktrees.
import { noCurrentDir } from '../sandbox/policy.js'
import { jsonSafe, writeOut } from '../cli/terminal-safe.js'
import fs from 'node:fs'
import path from 'node:path'
import { conversationJson, renderConversations, summarizeTranscript, uniqueConversations, type Conversation } from '../state/conversations.js'
import { EXIT } from '../errors.js'
import { probeProject, safeReaddir } from '../host/probe.js'
import { inPinnedDir } from '../host/fs.js'
import { canonicalRoot, instanceDir, instanceId } from '../state/instance.js'
import { liveSessionRecords } from '../state/scan.js'
import type { Settings } from '../config/settings.js'
import { usageError } from '../errors.js'
import { sanitizePath } from '../state/adopt.js'

/** How much of a transcript is read to find its first user message. */
const HEAD_BYTES = 256 * 1024

export function runSessions(settings: Settings, json: boolean): number {
  const facts = probeProject(settings)
  if (facts.cwd === undefined) throw usageError(noCurrentDir(facts, 'cd into your project and rerun'))
  const instance = instanceDir(facts.claudeboxHome, instanceId(canonicalRoot(facts.cwd, facts.git)))
  const live = liveSessionRecords(instance).map(r => Date.parse(r.started))
  const conversations = listConversations(path.join(instance, 'projects'), live)
  const unique = uniqueConversations(conversations)
  writeOut(json ? `${jsonSafe(unique.map(conversationJson))}\n` : renderConversations(unique))
  return EXIT.ok
}

/**
 * The transcripts in projects/<folder>/. The agent writes there, also while this runs: projects/
 * and each folder are opened without following a link and read through that descriptor (red team,
 * round 37: a folder swapped for a link between the check and the listing had --sessions print a
 * file outside the instance). A folder that is a symlink is not this project's history: skipped.
 */
export function listConversations(projects: string, live: readonly number[]): Conversation[] {
  const conversations: Conversation[] = []
  inPinnedDir(projects, at => {
    for (const folder of safeReaddir(at)) {
      inPinnedDir(`${at}/${folder}`, here => {
        for (const name of safeReaddir(here)) {
          if (!name.endsWith('.jsonl')) continue
          let st: fs.Stats
          try {
            st = fs.lstatSync(`${here}/${name}`)
          } catch {
            continue
          }
          if (!st.isFile()) continue
          const { firstMessage, cwd } = summarizeTranscript(readHead(`${here}/${name}`))
          conversations.push({ id: name.slice(0, -'.jsonl'.length), folder, modified: st.mtimeMs, size: st.size, firstMessage, cwd, live: live.some(start => start <= st.mtimeMs) })
        }
      })
    }
  })
  return conversations
}

function readHead(file: string): string {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
  try {
    if (!fs.fstatSync(fd).isFile()) return ''
    const buffer = Buffer.alloc(HEAD_BYTES)
    const length = fs.readSync(fd, buffer, 0, HEAD_BYTES, 0)
    return buffer.subarray(0, length).toString('utf8')
  } finally {
    fs.closeSync(fd)
  }
}


/**
 * The conversation a session just wrote in this directory, for the resume hint after it: Claude
 * itself prints `claude --resume ID`, which fails outside the sandbox.
 */
export function conversationSince(instance: string, cwd: string, since: number): string | undefined {
  let newest: { id: string; modified: number } | undefined
  inPinnedDir(path.join(instance, 'projects'), projects =>
    inPinnedDir(`${projects}/${sanitizePath(cwd)}`, folder => {
      for (const name of safeReaddir(folder)) {
        if (!name.endsWith('.jsonl')) continue
        try {
          const st = fs.lstatSync(`${folder}/${name}`)
          if (st.isFile() && st.mtimeMs >= since && (newest === undefined || st.mtimeMs > newest.modified)) newest = { id: name.slice(0, -'.jsonl'.length), modified: st.mtimeMs }
        } catch {
          // removed meanwhile
        }
      }
    }),
  )
  return newest?.id
}
