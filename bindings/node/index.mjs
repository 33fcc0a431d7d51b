// The ESM entry point: the same classes as the CommonJS one.
import cjs from './index.js'

export const StrataLevel = cjs.StrataLevel
export const ClassicLevel = cjs.ClassicLevel
