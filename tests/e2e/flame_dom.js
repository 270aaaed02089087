// flame_dom.js: runs a flame graph's own script (tapsets/flame.lua's) in
// node against a small stand-in for the browser's DOM, built from the
// SVG's frames (flame_dom.py hands them over as JSON on stdin), then
// clicks a frame and searches, and prints what the user would see:
//   zoom NAME: the frames still shown, each "name x width"
//   search TERM: the "Matched" line
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
function el(attrs, children, text) {
  const e = { attrs: Object.assign({}, attrs), style: {}, handlers: {}, textContent: text || "",
    children: children || [] };
  e.getAttribute = (k) => (k in e.attrs ? e.attrs[k] : null);
  e.setAttribute = (k, v) => { e.attrs[k] = String(v); };
  e.addEventListener = (k, f) => { e.handlers[k] = f; };
  e.getElementsByTagName = (t) => e.children.filter((c) => c.tag === t);
  return e;
}
const domFrames = input.frames.map((f) => {
  const title = el({ "data-name": f.name }); title.tag = "title";
  const rect = el(f.rect); rect.tag = "rect";
  const text = el(f.text_attrs, [], f.text); text.tag = "text";
  return el(f.g, [title, rect, text]);
});
const root = el(input.root);
const byId = { flame: root, status: el({}), unzoom: el({}), matched: el({}), search: el({}) };
global.document = {
  documentElement: root,
  getElementsByClassName: (c) => (c === "f" ? domFrames : []),
  getElementById: (id) => byId[id],
};
let answer = null;
global.prompt = () => answer;
(0, eval)(input.script + "\ninit();"); // the file's own code, in the global scope as a browser runs it
const act = process.argv[2], arg = process.argv[3];
if (act === "zoom") {
  const g = domFrames.find((f) => f.children[0].attrs["data-name"] === arg);
  g.handlers.click({ currentTarget: g });
  for (const f of domFrames) {
    if (f.style.display === "none") continue;
    const r = f.children[1];
    console.log(f.children[0].attrs["data-name"], (+r.attrs.x).toFixed(1), (+r.attrs.width).toFixed(1));
  }
  console.log("unzoom", byId.unzoom.style.opacity);
} else if (act === "search") {
  answer = arg;
  byId.search.handlers.click({});
  console.log(byId.matched.textContent);
} else if (act === "hover") {
  const g = domFrames.find((f) => f.children[0].attrs["data-name"] === arg);
  g.handlers.mouseover({ currentTarget: g });
  console.log(byId.status.textContent);
}
