// Draws the sorted-write latency chart with Vega-Lite (rendered to SVG by Vega, headless).

import * as vega from 'vega'
import * as vegaLite from 'vega-lite'

// `series`: { engine: [{ t: seconds since start, us: average µs per write in the batch }] }.
export async function latencyChart (series, title) {
  const values = []
  for (const [engine, points] of Object.entries(series)) {
    for (const { t, us } of points) values.push({ engine, t, us })
  }
  const spec = vegaLite.compile({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 900,
    height: 420,
    data: { values },
    mark: { type: 'line', strokeWidth: 0.8, opacity: 0.8 },
    encoding: {
      x: { field: 't', type: 'quantitative', title: 'time since the first batch (s)' },
      y: {
        field: 'us',
        type: 'quantitative',
        title: 'average latency per write in a batch of 1000 (µs, log scale)',
        scale: { type: 'log' }
      },
      color: { field: 'engine', type: 'nominal', title: 'engine' }
    }
  }).spec
  const view = new vega.View(vega.parse(spec), { renderer: 'none' })
  return view.toSVG()
}
