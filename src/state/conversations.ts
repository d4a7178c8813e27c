// --sessions: this project's Claude conversations across all its worktrees. Pure parsing.
import { humanSize } from './list.js'
import { inlineSafe } from '../cli/terminal-safe.js'
export interface Conversation {
  id: string
  /** The folder under projects/ (Claude's sanitized working directory). */
  folder: string
  modified: number
  size: number
  firstMessage: string
  cwd: string | undefined
  live: boolean
}

/** The first user message and working directory of a transcript (JSON Lines). */
export function summarizeTranscript(text: string): { firstMessage: string; cwd: string | undefined } {
  let cwd: string | undefined
  for (const line of text.split('\n')) {
    let entry: { type?: unknown; cwd?: unknown; message?: { role?: unknown; content?: unknown } }
    try {
      entry = JSON.parse(line) as typeof entry
    } catch {
      continue
    }
    if (cwd === undefined && typeof entry.cwd === 'string') cwd = entry.cwd
    if (entry.type !== 'user' || entry.message?.role !== 'user') continue
    const content = entry.message.content
    const text = typeof content === 'string' ? content : Array.isArray(content) ? content.map(textOf).join(' ') : ''
    if (text.trim() !== '') return { firstMessage: text.replace(/\s+/g, ' ').trim(), cwd }
  }
  return { firstMessage: '', cwd }
}

function textOf(part: unknown): string {
  if (part === null || typeof part !== 'object') return ''
  const { type, text } = part as { type?: unknown; text?: unknown }
  return type === 'text' && typeof text === 'string' ? text : ''
}

export function renderConversations(conversations: readonly Conversation[]): string {
  const rows = [...conversations].sort((a, b) => b.modified - a.modified)
  const lines = rows.map(c => {
    const date = new Date(c.modified).toISOString().slice(0, 16).replace('T', ' ')
    const message = c.firstMessage.length > 60 ? `${c.firstMessage.slice(0, 57)}...` : c.firstMessage
    return `${date}  ${inlineSafe(c.id)}  ${humanSize(c.size).padStart(8)}  ${c.live ? 'live' : '    '}  ${inlineSafe(c.cwd ?? c.folder)}  ${inlineSafe(message)}`
  })
  if (lines.length === 0) return 'no conversations in this project yet\n'
  return `${['DATE            ', 'ID                                  ', '    SIZE', 'LIVE', 'PATH  FIRST MESSAGE'].join('  ')}\n${lines.join('\n')}\n`
}

/**
 * One row per conversation: `--resume` in a second worktree hard-links the transcript into that
 * worktree's folder, so the same id appears twice; the newest copy stands for it.
 */
export function uniqueConversations(conversations: readonly Conversation[]): Conversation[] {
  const byId = new Map<string, Conversation>()
  for (const c of conversations) {
    const seen = byId.get(c.id)
    if (seen === undefined || c.modified > seen.modified) byId.set(c.id, c)
  }
  return [...byId.values()].sort((a, b) => b.modified - a.modified)
}

/** For --sessions --json: times as ISO strings, as --list gives them. */
export const conversationJson = (c: Conversation): Omit<Conversation, 'modified'> & { modified: string } => ({ ...c, modified: new Date(c.modified).toISOString() })
