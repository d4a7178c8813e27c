// Where an index's own records say its entries end (the EOIE extension) and where blocks of them
// start (IEOT): git reads with threads (index.threads, set by ~/.gitconfig or a Scalar
// repository's config) from those offsets, and without threads, as claudebox's git does, from the
// entries themselves. Git writes the records to agree with the entries; an index whose records
// do not is read two ways (red team, round 121: an EOIE pointing into an unknown extension that
// wrapped a split index's link had the threaded reading merge a shared part listing
// .git/hooks/pre-commit, which the plain reading never saw). Such an index counts as bad.
import fs from 'node:fs'

/** Whether the index file `file`, read with hashes of this format, has no EOIE, or one (and an IEOT) agreeing with its entries; false when it cannot be read. */
export function layoutAgrees(file: string, sha256: boolean): boolean {
  const hashLen = sha256 ? 32 : 20
  let fd: number | undefined
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    const eoie = endOfEntriesAt(fd, hashLen)
    if (eoie === undefined) return true
    const bytes = fs.readFileSync(fd)
    const entries = readEntries(bytes, hashLen)
    const end = entries?.starts[entries.starts.length - 1]
    return entries !== undefined && end !== undefined && bytes.readUInt32BE(eoie + 8) === end && offsetTableAgrees(bytes, end, eoie, entries)
  } catch {
    return false
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** Whether the index file `file` holds an EOIE at all (git with threads may then read it otherwise: index-git.ts has it read so too). */
export function hasEndOfEntries(file: string, sha256: boolean): boolean {
  let fd: number | undefined
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    return endOfEntriesAt(fd, sha256 ? 32 : 20) !== undefined
  } catch {
    return false
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/**
 * Where the EOIE extension starts: last, right before the checksum ("EOIE", its size, a 4-byte
 * offset and a hash). Git takes its size as of a SHA-1 hash in every format (round 122: a SHA-256
 * index's EOIE where git looks for it was not seen here); the place of a SHA-256 hash is looked at too.
 */
function endOfEntriesAt(fd: number, hashLen: number): number | undefined {
  const size = fs.fstatSync(fd).size
  const tail = Buffer.alloc(4)
  for (const trailer of new Set([8 + 4 + 20 + hashLen, 8 + 4 + hashLen + hashLen])) {
    if (size >= 12 + trailer && fs.readSync(fd, tail, 0, 4, size - trailer) === 4 && tail.toString('latin1') === 'EOIE') return size - trailer
  }
  return undefined
}

/** Where each entry starts and, last, where they end; for version 4, whether each entry drops the whole name before it. */
interface Entries {
  starts: number[]
  /** Version 4: entry i keeps nothing of the name before it (what git writes at each IEOT block's start). */
  fresh?: boolean[]
}

/** The entries, read as git reads them without threads (versions 2 to 4); undefined when they run past the file. */
function readEntries(bytes: Buffer, hashLen: number): Entries | undefined {
  const version = bytes.readUInt32BE(4)
  const count = bytes.readUInt32BE(8)
  const starts: number[] = []
  const fresh: boolean[] = []
  let at = 12
  let previousLength = 0
  for (let i = 0; i < count; i++) {
    starts.push(at)
    const fixed = 40 + hashLen
    if (at + fixed + 2 > bytes.length) return undefined
    const flags = bytes.readUInt16BE(at + fixed)
    const flagBytes = (flags & 0x4000) !== 0 ? 4 : 2
    const name = at + fixed + flagBytes
    if (version === 4) {
      const strip = varint(bytes, name)
      if (strip === undefined || strip.value > previousLength) return undefined
      const kept = previousLength - strip.value
      // Git sizes the name by its flags (below 0xfff), the part after what is kept from the name before.
      const end = nameEnd(bytes, strip.end, flags, kept)
      if (end === undefined) return undefined
      fresh.push(kept === 0)
      previousLength = kept + (end - strip.end)
      at = end + 1
    } else {
      const end = nameEnd(bytes, name, flags, 0)
      if (end === undefined) return undefined
      at += (fixed + flagBytes + (end - name) + 8) & ~7
    }
  }
  starts.push(at)
  return at <= bytes.length ? { starts, ...(version === 4 ? { fresh } : {}) } : undefined
}

/**
 * Where a name written from `from` ends (its NUL): by the length in `flags` less what is `kept` of
 * the name before, as git reads it, which must be where its first NUL is, as git writes it (red
 * team, round 123: a version 4 name whose length ran past a NUL hid an entry and an IEOT from this
 * look); to the first NUL for a length of 0xfff or more. Undefined when they differ or run past the file.
 */
function nameEnd(bytes: Buffer, from: number, flags: number, kept: number): number | undefined {
  const nul = bytes.indexOf(0, from)
  if (nul < 0) return undefined
  if ((flags & 0xfff) === 0xfff) return nul
  return from + (flags & 0xfff) - kept === nul ? nul : undefined
}

/** Git's varint (varint.c): its value and where it ends; undefined past the file or too large. */
function varint(bytes: Buffer, at: number): { value: number; end: number } | undefined {
  let c = bytes[at++]
  if (c === undefined) return undefined
  let value = c & 127
  while ((c & 128) !== 0) {
    c = bytes[at++]
    if (c === undefined || value > 2 ** 40) return undefined
    value = (value + 1) * 128 + (c & 127)
  }
  return { value, end: at }
}

/** The extensions from `end` up to EOIE: each within them, and an IEOT (version 1) whose blocks start where entries start, in order, and cover them all. */
function offsetTableAgrees(bytes: Buffer, end: number, eoie: number, entries: Entries): boolean {
  let at = end
  while (at < eoie) {
    if (at + 8 > eoie) return false
    const size = bytes.readUInt32BE(at + 4)
    if (bytes.toString('latin1', at, at + 4) === 'IEOT' && !blocksAgree(bytes.subarray(at + 8, at + 8 + size), entries)) return false
    at += 8 + size
  }
  return at === eoie
}

/**
 * An IEOT's blocks: each at an entry's start, in order, covering all entries; in version 4, each
 * block's first entry dropping the whole name before it, as git writes it (a threaded git reads a
 * block's first name from nothing: round 122, `-` then a name keeping it and adding
 * `.git/hooks/pre-commit` read as `-.git/hooks/pre-commit` without threads).
 */
function blocksAgree(table: Buffer, { starts, fresh }: Entries): boolean {
  if (table.length < 4 || table.readUInt32BE(0) !== 1) return true // a version git does not know: it reads without the table
  let entry = 0
  for (let at = 4; at + 8 <= table.length; at += 8) {
    if (table.readUInt32BE(at) !== starts[entry] || (fresh !== undefined && entry > 0 && fresh[entry] !== true)) return false
    entry += table.readUInt32BE(at + 4)
  }
  return entry === starts.length - 1
}
