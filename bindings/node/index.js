'use strict'

// strata-kv: an abstract-level database over Strata. `ClassicLevel` is the same class under
// classic-level's name, so switching is changing the package in one require().
const { StrataLevel } = require('./lib/level')

exports.StrataLevel = StrataLevel
exports.ClassicLevel = StrataLevel
