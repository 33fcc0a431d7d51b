// The ESM entry point gives the same classes as the CommonJS one, by the package's own name.

import test from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { StrataLevel, ClassicLevel } from 'strata-kv'

const require = createRequire(import.meta.url)

test('import and require give the same StrataLevel, also as ClassicLevel', async (t) => {
  assert.equal(StrataLevel, require('strata-kv').StrataLevel)
  assert.equal(ClassicLevel, StrataLevel)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-kv-esm-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const db = new ClassicLevel(path.join(dir, 'db'), { valueEncoding: 'json' })
  await db.put('k', { a: 1 })
  assert.deepEqual(await db.get('k'), { a: 1 })
  await db.close()
})
