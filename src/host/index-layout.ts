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
  // EOIE is the last extension, right before the checksum: "EOIE", its size, the offset, a hash.
  const trailer = 8 + 4 + hashLen + hashLen
  let fd: number | undefined
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    const size = fs.fstatSync(fd).size
    const tail = Buffer.alloc(4)
    if (size < 12 + trailer || fs.readSync(fd, tail, 0, 4, size - trailer) !== 4 || tail.toString('latin1') !== 'EOIE') return true
    const bytes = fs.readFileSync(fd)
    const starts = entryStarts(bytes, hashLen)
    const end = starts?.[starts.length - 1]
    return starts !== undefined && end !== undefined && bytes.readUInt32BE(size - trailer + 8) === end && offsetTableAgrees(bytes, end, size - trailer, starts)
  } catch {
    return false
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/**
 * Where each entry starts, read as git reads them without threads (versions 2 to 4), and, last,
 * where they end; undefined when they run past the file.
 */
function entryStarts(bytes: Buffer, hashLen: number): number[] | undefined {
  const version = bytes.readUInt32BE(4)
  const count = bytes.readUInt32BE(8)
  const starts: number[] = []
  let at = 12
  for (let i = 0; i < count; i++) {
    starts.push(at)
    const fixed = 40 + hashLen
    if (at + fixed + 2 > bytes.length) return undefined
    const flags = bytes.readUInt16BE(at + fixed)
    const flagBytes = (flags & 0x4000) !== 0 ? 4 : 2
    let name = at + fixed + flagBytes
    if (version === 4) {
      while (name < bytes.length && ((bytes[name] as number) & 0x80) !== 0) name++ // the prefix length, a varint
      const nul = bytes.indexOf(0, name + 1)
      if (nul < 0) return undefined
      at = nul + 1
    } else {
      const nul = (flags & 0xfff) === 0xfff ? bytes.indexOf(0, name) : name + (flags & 0xfff)
      if (nul < 0) return undefined
      at += (fixed + flagBytes + (nul - name) + 8) & ~7
    }
  }
  starts.push(at)
  return at <= bytes.length ? starts : undefined
}

/** The extensions from `end` up to EOIE: each within them, and an IEOT (version 1) whose blocks start where entries start, in order, and cover them all. */
function offsetTableAgrees(bytes: Buffer, end: number, eoie: number, starts: readonly number[]): boolean {
  let at = end
  while (at < eoie) {
    if (at + 8 > eoie) return false
    const size = bytes.readUInt32BE(at + 4)
    if (bytes.toString('latin1', at, at + 4) === 'IEOT' && !blocksAgree(bytes.subarray(at + 8, at + 8 + size), starts)) return false
    at += 8 + size
  }
  return at === eoie
}

function blocksAgree(table: Buffer, starts: readonly number[]): boolean {
  if (table.length < 4 || table.readUInt32BE(0) !== 1) return true // a version git does not know: it reads without the table
  let entry = 0
  for (let at = 4; at + 8 <= table.length; at += 8) {
    if (table.readUInt32BE(at) !== starts[entry]) return false
    entry += table.readUInt32BE(at + 4)
  }
  return entry === starts.length - 1
}
