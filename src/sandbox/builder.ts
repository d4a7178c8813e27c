// What the sections of a launch plan add up: bwrap's argument groups, and for the audit what is
// read-only, writable and protected. Each section of plan.ts adds its part here.
import type { FdStep, FileStep } from '../types.js'

export class SandboxBuilder {
  readonly groups: string[][] = []
  readonly readOnly: string[] = []
  readonly writable: string[] = []
  readonly protections: string[] = []
  readonly warnings: string[] = []
  readonly mkdirs: { path: string; mode: number }[] = []
  readonly files: FileStep[] = []
  readonly fds: FdStep[] = []
  readonly userBinds: string[] = []

  /** One group of bwrap arguments (one line of --dry-run). */
  add(...words: string[]): void {
    this.groups.push(words)
  }

  roBind(p: string, dest = p): void {
    this.add('--ro-bind', p, dest)
    this.readOnly.push(dest)
  }

  bind(p: string, dest = p): void {
    this.add('--bind', p, dest)
    this.writable.push(dest)
  }
}
