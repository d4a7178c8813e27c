// The server name (SNI) of a TLS ClientHello, from the first bytes a client sends through a
// CONNECT tunnel: the proxy holds a tunnel to the host it admitted by refusing a ClientHello that
// names another one (domain fronting on a shared address). Pure; bounded: the hello may span TLS
// records and TCP chunks, and is read up to MAX_HELLO bytes, never more.

/** The largest ClientHello accepted (post-quantum key shares make them a few KB; 64 KiB is ample). */
export const MAX_HELLO = 64 * 1024

export type SniResult =
  | { state: 'need-more' }
  | { state: 'not-tls' }
  | { state: 'malformed'; why: string }
  | { state: 'done'; sni: string | undefined }

const HANDSHAKE = 0x16
const CLIENT_HELLO = 0x01
const SERVER_NAME = 0x0000

export function sniFromClientHello(data: Uint8Array): SniResult {
  if (data.length === 0) return { state: 'need-more' }
  if (data[0] !== HANDSHAKE) return { state: 'not-tls' }
  const hello = handshakeBytes(data)
  if ('state' in hello) return hello
  if (hello.bytes[0] !== CLIENT_HELLO) return { state: 'malformed', why: 'the first handshake message is not a ClientHello' }
  try {
    return { state: 'done', sni: serverName(hello.bytes.subarray(4)) }
  } catch (error) {
    return { state: 'malformed', why: (error as Error).message }
  }
}

/** The first handshake message, joined from as many TLS records as it spans. */
function handshakeBytes(data: Uint8Array): { bytes: Uint8Array } | SniResult {
  const parts: Uint8Array[] = []
  let offset = 0
  let have = 0
  for (;;) {
    if (data.length < offset + 5) return data.length > MAX_HELLO ? { state: 'malformed', why: 'hello too large' } : { state: 'need-more' }
    if (data[offset] !== HANDSHAKE) return { state: 'malformed', why: 'a ClientHello record is followed by another record type' }
    const length = ((data[offset + 3] ?? 0) << 8) | (data[offset + 4] ?? 0)
    if (length === 0 || length > 16384) return { state: 'malformed', why: `TLS record length ${length}` }
    if (data.length < offset + 5 + length) return offset + 5 + length > MAX_HELLO ? { state: 'malformed', why: 'hello too large' } : { state: 'need-more' }
    parts.push(data.subarray(offset + 5, offset + 5 + length))
    have += length
    offset += 5 + length
    const joined = concat(parts, have)
    if (joined.length >= 4) {
      const total = 4 + (((joined[1] ?? 0) << 16) | ((joined[2] ?? 0) << 8) | (joined[3] ?? 0))
      if (total > MAX_HELLO) return { state: 'malformed', why: 'hello too large' }
      if (joined.length >= total) return { bytes: joined.subarray(0, total) }
    }
  }
}

/** ClientHello body -> the host_name of its server_name extension, if any. */
function serverName(body: Uint8Array): string | undefined {
  const r = new Reader(body)
  r.skip(2 + 32) // legacy_version, random
  r.skip(r.u8()) // session id
  r.skip(r.u16()) // cipher suites
  r.skip(r.u8()) // compression methods
  if (r.done()) return undefined // no extensions at all
  const extensions = new Reader(r.take(r.u16()))
  while (!extensions.done()) {
    const type = extensions.u16()
    const ext = new Reader(extensions.take(extensions.u16()))
    if (type !== SERVER_NAME) continue
    const list = new Reader(ext.take(ext.u16()))
    while (!list.done()) {
      const kind = list.u8()
      const name = list.take(list.u16())
      if (kind === 0) return Buffer.from(name).toString('latin1')
    }
    return undefined
  }
  return undefined
}

class Reader {
  private at = 0
  constructor(private readonly bytes: Uint8Array) {}
  done(): boolean {
    return this.at >= this.bytes.length
  }
  u8(): number {
    return this.take(1)[0] ?? 0
  }
  u16(): number {
    const b = this.take(2)
    return ((b[0] ?? 0) << 8) | (b[1] ?? 0)
  }
  skip(n: number): void {
    this.take(n)
  }
  take(n: number): Uint8Array {
    if (this.at + n > this.bytes.length) throw new Error('truncated ClientHello')
    const out = this.bytes.subarray(this.at, this.at + n)
    this.at += n
    return out
  }
}

function concat(parts: readonly Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array
  const out = new Uint8Array(length)
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}
