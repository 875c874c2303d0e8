function leaf(n) { let s = 0; for (let i = 0; i < n; i++) { s += Math.sqrt(i) } return s }
function fast() { return leaf(2e6) }
function slow(n) { let s = leaf(2e6); for (let i = 0; i < n; i++) { s += Math.sqrt(i) * 0.25 } return s }
const n = Number(process.argv[2])
let t = 0
for (let k = 0; k < 20; k++) { t += fast() + slow(n) }
if (t < 0) console.log(t)
