// How a request's body goes from the sandbox through the API gateway (api-gateway.ts) upstream:
// as it comes when its length is declared (Claude's are), read whole first when it is not. Every
// byte the launcher holds is counted the moment it is held, against a limit per body and one for
// all of them: the sandbox must not make the launcher hold gigabytes (red team, round 56: bodies
// still coming in chunks were counted only once whole, and 24 of them held 1.5 GB).
import type http from 'node:http'

/** The largest body, and all the bodies held at once. */
export interface BodyLimits {
  one: number
  all: number
}

export const BODY_LIMITS: BodyLimits = {
  /** A long conversation is a few MB. */
  one: 64 << 20,
  all: 256 << 20,
}

/** What every call of the gateway holds now. */
export interface Held {
  bytes: number
  limits: BodyLimits
}

/** One call's part of what is held: taken as bytes are held, given back once, at the call's end. */
export interface Share {
  readonly limits: BodyLimits
  /** Counts `bytes` more; false when that is over a limit (then nothing of this call stays counted). */
  take(bytes: number): boolean
  /** Gives it all back, and lets go of what was held (`onRelease`). */
  release(): void
  onRelease(letGo: () => void): void
}

export function shareOf(held: Held): Share {
  let mine = 0
  let open = true
  const lettingGo: (() => void)[] = []
  const share: Share = {
    limits: held.limits,
    take(bytes) {
      if (!open) return false
      mine += bytes
      held.bytes += bytes
      if (mine <= held.limits.one && held.bytes <= held.limits.all) return true
      share.release()
      return false
    },
    release() {
      if (!open) return
      held.bytes -= mine
      open = false
      for (const letGo of lettingGo.splice(0)) letGo()
    },
    onRelease(letGo) {
      if (open) lettingGo.push(letGo)
      else letGo()
    },
  }
  return share
}

/** A body on its way upstream: the bytes, or the client's request itself as it comes. */
export interface Outgoing {
  content: Buffer | http.IncomingMessage
  length: number
}

export interface Body {
  first: Outgoing
  /** The whole body again, for a retry; undefined when it was not kept, was dropped, or the client went first. */
  again: () => Promise<Buffer | undefined>
  /** Keeps no more of it: no retry will come (the rest of the body, still coming, is not held). */
  drop: () => void
}

/**
 * The body's way upstream; undefined when it is over the limits (then nothing went upstream).
 * One of a declared length goes as it comes, in step with the client: Claude's requests come in
 * pieces, and reading them whole first took 0.66 ms a call on average in a 30-command turn (52 KB
 * bodies, measured inside the gateway). It is kept as well, counted, only when `keep` (a 401 a
 * refresh may cure: the call is sent again). One without a declared length is read whole first.
 */
export async function requestBody(req: http.IncomingMessage, share: Share, keep: boolean): Promise<Body | undefined> {
  const declared = declaredLength(req)
  if (declared === undefined) {
    let bytes = await readWhole(req, share)
    return bytes && { first: { content: bytes, length: bytes.length }, again: () => Promise.resolve(bytes), drop: () => (bytes = undefined) }
  }
  if (declared > share.limits.one) return undefined
  const first = { content: req, length: declared }
  if (!keep) return { first, again: () => Promise.resolve(undefined), drop: () => {} }
  if (!share.take(declared)) return undefined
  const copy = kept(req)
  share.onRelease(copy.drop)
  return { first, ...copy }
}

/**
 * A copy of the body as it goes upstream, for a retry. Paused, the listener takes nothing until
 * the pipe upstream starts the request flowing; it keeps it flowing if that pipe ends early (an
 * API that answered 401 and closed, tested). Dropped, it keeps nothing more (red team, round 57:
 * after an early answer, the rest of a body kept coming into a copy no longer counted).
 */
function kept(req: http.IncomingMessage): Pick<Body, 'again' | 'drop'> {
  let chunks: Buffer[] | undefined = []
  const keep = (chunk: Buffer): void => void chunks?.push(chunk)
  const drop = (): void => {
    req.off('data', keep)
    chunks = undefined
  }
  req.pause().on('data', keep)
  const ended = new Promise<boolean>(resolve => {
    req.once('end', () => resolve(true))
    req.once('close', () => resolve(req.complete))
  })
  // Joined only when a retry asks for it, then held once (the pieces let go).
  const again = async (): Promise<Buffer | undefined> => {
    const whole = (await ended) && chunks !== undefined ? Buffer.concat(chunks) : undefined
    drop()
    return whole
  }
  return { again, drop }
}

/** The request's Content-Length, when it has one and no Transfer-Encoding (Node's parser refuses both). */
function declaredLength(req: http.IncomingMessage): number | undefined {
  const value = req.headers['content-length']
  if (value === undefined || req.headers['transfer-encoding'] !== undefined || !/^\d{1,16}$/.test(value)) return undefined
  return Number(value)
}

/**
 * The body whole, each chunk counted as it comes; undefined when that goes over a limit. Joining
 * the pieces makes a second copy for a moment (here and in `kept`): at most twice the limits are
 * held while it is made, and the pieces go at once (red team, round 58).
 */
async function readWhole(req: http.IncomingMessage, share: Share): Promise<Buffer | undefined> {
  const chunks: Buffer[] = []
  for await (const chunk of req as AsyncIterable<Buffer>) {
    if (!share.take(chunk.length)) return undefined
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}
