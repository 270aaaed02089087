# flame_dom.py: a flame graph SVG's frames, root attributes and script, as
# JSON for flame_dom.js. Parsing it is itself a check: the file must be
# well-formed XML. Usage: python3 flame_dom.py FILE.svg
import json, sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
frames = []
for g in root.iter(NS + "g"):
    t, r, x = g.find(NS + "title"), g.find(NS + "rect"), g.find(NS + "text")
    frames.append({"g": dict(g.attrib), "name": t.get("data-name"), "rect": dict(r.attrib),
                   "text_attrs": dict(x.attrib), "text": x.text or ""})
scripts = [s.text for s in root.iter(NS + "script")]
json.dump({"root": dict(root.attrib), "frames": frames, "script": "".join(scripts),
           "nscripts": len(scripts)}, sys.stdout)
