#!/usr/bin/env node
// Draws Pacer's icon — a rounded square with a pace gauge (green → amber → red arc, needle
// near the limit) — and writes resources/icon.png (512×512) and resources/icon.ico (16–256 px,
// PNG-compressed entries). Only node:zlib: no image library, no download. Deterministic output,
// so re-running it changes nothing in git unless the drawing changes.
//
// electron-builder derives what it needs from these: the mac .icns from icon.png (≥ 512 px),
// Linux's icon set from icon.png; Windows takes icon.ico as is.
import { writeFileSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { deflateSync } from 'node:zlib'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const OUT = join(ROOT, 'resources')

// ------------------------------------------------------------------ drawing (in a 512 unit box)

const hex = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16))
const lerp = (a, b, t) => a + (b - a) * t
const mix = (c1, c2, t) => c1.map((v, i) => lerp(v, c2[i], t))

const BG_TOP = hex('#1e1b4b') // indigo-950
const BG_BOTTOM = hex('#115e59') // teal-800
const GREEN = hex('#34d399')
const AMBER = hex('#fbbf24')
const RED = hex('#f87171')
const WHITE = hex('#f8fafc')

const MARGIN = 28
const RADIUS = 104
const CX = 256
const CY = 296
const ARC_R = 150
const ARC_W = 40
const ARC_FROM = 205 // degrees, counter-clockwise from +x; the arc runs over the top
const ARC_TO = -25
const NEEDLE_DEG = 58
const NEEDLE_LEN = 132

function insideRoundedSquare(x, y) {
  const lo = MARGIN
  const hi = 512 - MARGIN
  if (x < lo || x > hi || y < lo || y > hi) return false
  const qx = Math.max(lo + RADIUS - x, x - (hi - RADIUS), 0)
  const qy = Math.max(lo + RADIUS - y, y - (hi - RADIUS), 0)
  return qx * qx + qy * qy <= RADIUS * RADIUS
}

function polar(deg, r) {
  const a = (deg * Math.PI) / 180
  return [CX + r * Math.cos(a), CY - r * Math.sin(a)]
}

/** Position along the gauge (0 = left end, 1 = right end), or null outside the band. */
function arcPosition(x, y) {
  const dx = x - CX
  const dy = CY - y
  const r = Math.hypot(dx, dy)
  let deg = (Math.atan2(dy, dx) * 180) / Math.PI
  if (deg < -90) deg += 360
  if (deg <= ARC_FROM && deg >= ARC_TO && Math.abs(r - ARC_R) <= ARC_W / 2) {
    return (ARC_FROM - deg) / (ARC_FROM - ARC_TO)
  }
  // Round caps at both ends.
  for (const [end, t] of [
    [ARC_FROM, 0],
    [ARC_TO, 1],
  ]) {
    const [ex, ey] = polar(end, ARC_R)
    if (Math.hypot(x - ex, y - ey) <= ARC_W / 2) return t
  }
  return null
}

function insideNeedle(x, y) {
  const [tx, ty] = polar(NEEDLE_DEG, NEEDLE_LEN)
  const vx = tx - CX
  const vy = ty - CY
  const u = Math.max(0, Math.min(1, ((x - CX) * vx + (y - CY) * vy) / (vx * vx + vy * vy)))
  const px = CX + u * vx
  const py = CY + u * vy
  return Math.hypot(x - px, y - py) <= lerp(15, 6, u)
}

function gaugeColor(t) {
  return t < 0.5 ? mix(GREEN, AMBER, t / 0.5) : mix(AMBER, RED, (t - 0.5) / 0.5)
}

/** RGBA (0–255, straight alpha) of one point of the 512 box, or null when transparent. */
function sample(x, y) {
  if (!insideRoundedSquare(x, y)) return null
  const bg = mix(BG_TOP, BG_BOTTOM, (x + y) / 1024)
  const hub = Math.hypot(x - CX, y - CY)
  if (hub <= 11) return bg
  if (hub <= 30 || insideNeedle(x, y)) return WHITE
  // Tick marks inside the arc: the gauge reads as a gauge even at 32 px.
  for (let i = 0; i <= 4; i++) {
    const deg = lerp(ARC_FROM, ARC_TO, i / 4)
    const [ax, ay] = polar(deg, ARC_R - ARC_W / 2 - 16)
    const [bx, by] = polar(deg, ARC_R - ARC_W / 2 - 36)
    const vx = bx - ax
    const vy = by - ay
    const u = Math.max(0, Math.min(1, ((x - ax) * vx + (y - ay) * vy) / (vx * vx + vy * vy)))
    if (Math.hypot(x - (ax + u * vx), y - (ay + u * vy)) <= 4.5) return mix(bg, WHITE, 0.55)
  }
  const t = arcPosition(x, y)
  if (t !== null) return gaugeColor(t)
  return bg
}

/** Renders `size`×`size` RGBA pixels with 4×4 supersampling (premultiplied averaging). */
function render(size) {
  const pixels = Buffer.alloc(size * size * 4)
  const scale = 512 / size
  const n = 4
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let r = 0
      let g = 0
      let b = 0
      let a = 0
      for (let sy = 0; sy < n; sy++) {
        for (let sx = 0; sx < n; sx++) {
          const c = sample((px + (sx + 0.5) / n) * scale, (py + (sy + 0.5) / n) * scale)
          if (!c) continue
          r += c[0]
          g += c[1]
          b += c[2]
          a += 1
        }
      }
      const o = (py * size + px) * 4
      if (a > 0) {
        pixels[o] = Math.round(r / a)
        pixels[o + 1] = Math.round(g / a)
        pixels[o + 2] = Math.round(b / a)
        pixels[o + 3] = Math.round((a / (n * n)) * 255)
      }
    }
  }
  return pixels
}

// ------------------------------------------------------------------ PNG + ICO encoding

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

function crc32(buf) {
  let c = 0xffffffff
  for (const byte of buf) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

function chunk(type, data) {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

function encodePng(size, rgba) {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(size, 0)
  header.writeUInt32BE(size, 4)
  header[8] = 8 // bit depth
  header[9] = 6 // RGBA
  // compression, filter, interlace: all 0
  const stride = size * 4
  const raw = Buffer.alloc((stride + 1) * size)
  for (let y = 0; y < size; y++) {
    raw[y * (stride + 1)] = 0 // filter: none
    rgba.copy(raw, y * (stride + 1) + 1, y * stride, (y + 1) * stride)
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

/** An .ico whose entries are PNGs (Windows Vista and later read those at every size). */
function encodeIco(images) {
  const header = Buffer.alloc(6)
  header.writeUInt16LE(0, 0)
  header.writeUInt16LE(1, 2) // type: icon
  header.writeUInt16LE(images.length, 4)
  const entries = []
  let offset = 6 + 16 * images.length
  for (const { size, png } of images) {
    const e = Buffer.alloc(16)
    e[0] = size >= 256 ? 0 : size // 0 means 256
    e[1] = size >= 256 ? 0 : size
    e[2] = 0 // palette colors
    e[3] = 0
    e.writeUInt16LE(1, 4) // planes
    e.writeUInt16LE(32, 6) // bits per pixel
    e.writeUInt32LE(png.length, 8)
    e.writeUInt32LE(offset, 12)
    offset += png.length
    entries.push(e)
  }
  return Buffer.concat([header, ...entries, ...images.map((i) => i.png)])
}

mkdirSync(OUT, { recursive: true })
const png512 = encodePng(512, render(512))
writeFileSync(join(OUT, 'icon.png'), png512)
const icoImages = [16, 24, 32, 48, 64, 128, 256].map((size) => ({
  size,
  png: encodePng(size, render(size)),
}))
writeFileSync(join(OUT, 'icon.ico'), encodeIco(icoImages))
console.log(
  `make-icons: wrote resources/icon.png (512×512, ${png512.length} bytes) and resources/icon.ico ` +
    `(${icoImages.map((i) => i.size).join(', ')} px)`,
)
