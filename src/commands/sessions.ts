// --sessions: lists this project's Claude conversations, newest first, across its worktrees.
import { noCurrentDir } from '../sandbox/policy.js'
import { jsonSafe, writeOut } from '../cli/terminal-safe.js'
import fs from 'node:fs'
import path from 'node:path'
import { conversationJson, renderConversations, summarizeTranscript, uniqueConversations, type Conversation } from '../state/conversations.js'
import { EXIT } from '../errors.js'
import { lstatKind, probeProject, safeReaddir } from '../host/probe.js'
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
  const projects = path.join(instance, 'projects')
  const conversations: Conversation[] = []
  // The agent can replace projects/ by a symlink out of the instance: then there is nothing to list.
  const folders = lstatKind(projects) === 'dir' ? safeReaddir(projects) : []
  for (const folder of folders) {
    // A symlinked folder (the agent can plant one) is not this project's history: skip it.
    if (lstatKind(path.join(projects, folder)) !== 'dir') continue
    for (const name of safeReaddir(path.join(projects, folder))) {
      if (!name.endsWith('.jsonl')) continue
      const file = path.join(projects, folder, name)
      let st: fs.Stats
      try {
        st = fs.lstatSync(file)
      } catch {
        continue
      }
      if (!st.isFile()) continue
      const { firstMessage, cwd } = summarizeTranscript(readHead(file))
      conversations.push({ id: name.slice(0, -'.jsonl'.length), folder, modified: st.mtimeMs, size: st.size, firstMessage, cwd, live: live.some(start => start <= st.mtimeMs) })
    }
  }
  const unique = uniqueConversations(conversations)
  writeOut(json ? `${jsonSafe(unique.map(conversationJson))}\n` : renderConversations(unique))
  return EXIT.ok
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
  const folder = path.join(instance, 'projects', sanitizePath(cwd))
  if (lstatKind(path.join(instance, 'projects')) !== 'dir' || lstatKind(folder) !== 'dir') return undefined
  let newest: { id: string; modified: number } | undefined
  for (const name of safeReaddir(folder)) {
    if (!name.endsWith('.jsonl')) continue
    try {
      const st = fs.lstatSync(path.join(folder, name))
      if (st.isFile() && st.mtimeMs >= since && (newest === undefined || st.mtimeMs > newest.modified)) newest = { id: name.slice(0, -'.jsonl'.length), modified: st.mtimeMs }
    } catch {
      // removed meanwhile
    }
  }
  return newest?.id
}
