// The least any Node launcher of bwrap does: start Node, load child_process, spawn the bwrap
// command given as JSON in argv[2] with the descriptors the sandbox reads (seccomp program,
// Landlock helper, the go), and wait for it. The benchmark shows it beside the floor of P1.
'use strict'
const { spawn } = require('node:child_process')
const fs = require('node:fs')
const { argv, files } = JSON.parse(process.argv[2])
const fds = files.map(file => fs.openSync(file, 'r'))
const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'inherit', 'inherit', 'ignore', fds[0], fds[1], 'ignore', fds[2]], env: {} })
for (const fd of fds) fs.closeSync(fd)
child.on('close', code => (process.exitCode = code ?? 1))
