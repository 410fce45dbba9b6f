// Load glTF/GLB files of a stage (several figures and props) with three.js (GLTFLoader.parseAsync under
// node) and report every glTF node's world transform as three.js computes it.
// Usage: node stage_check.mjs FILE...   Prints one JSON object on stdout, per file:
//   {"nodes": [{"node", "name", "ancestors"}],   every node three.js made an object for: its glTF index,
//                                                its name in the file (three.js renames duplicates, so
//                                                the file's name is looked up by the node's index) and
//                                                the file's names of its ancestors in three.js's tree
//    "samples": [{"time", "positions", "quaternions", "scales"}]}
// One sample of the static scene when the file has no clip "take", else one per key time of that clip,
// played with LoopOnce and clampWhenFinished (so the last key does not wrap to the first).
// positions/quaternions/scales: world position (x,y,z), rotation (x,y,z,w) and scale (x,y,z) of each
// node of "nodes", in that order (Object3D.matrixWorld decomposed).
import fs from "node:fs";
import * as THREE from "three";
import { GLTFLoader } from "three/examples/jsm/loaders/GLTFLoader.js";
import { clipSamples } from "./clip_samples.mjs";

// three's FileLoader (used for the data: URI buffer of a .gltf) reports progress with the browser's
// ProgressEvent, which node 20 lacks; a .glb needs nothing.
globalThis.ProgressEvent ??= class ProgressEvent extends Event {
  constructor(type, init = {}) {
    super(type);
    Object.assign(this, init);
  }
};

// Under node there is no image decoding: a plugin gives every texture an empty one (a character's texture;
// what is checked here is where things are).
const noTextures = () => ({ name: "no_textures", loadTexture: async () => new THREE.Texture() });

function sample(scene, objects, time) {
  scene.updateMatrixWorld(true);
  const p = new THREE.Vector3();
  const q = new THREE.Quaternion();
  const s = new THREE.Vector3();
  const positions = [];
  const quaternions = [];
  const scales = [];
  for (const o of objects) {
    o.matrixWorld.decompose(p, q, s);
    positions.push([p.x, p.y, p.z]);
    quaternions.push([q.x, q.y, q.z, q.w]);
    scales.push([s.x, s.y, s.z]);
  }
  return { time, positions, quaternions, scales };
}

async function check(file) {
  const bytes = fs.readFileSync(file);
  const data = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const gltf = await new GLTFLoader().register(noTextures).parseAsync(data, "");
  const assoc = gltf.parser.associations;
  const names = gltf.parser.json.nodes.map((n) => n.name ?? null);
  const nodeOf = (o) => assoc.get(o)?.nodes;
  const objects = [];
  const nodes = [];
  gltf.scene.traverse((o) => {
    const index = nodeOf(o);
    if (index === undefined) return;
    const ancestors = [];
    for (let a = o.parent; a; a = a.parent) {
      const i = nodeOf(a);
      if (i !== undefined) ancestors.push(names[i]);
    }
    objects.push(o);
    nodes.push({ node: index, name: names[index], ancestors });
  });
  // (a stage's animation is its clip "take"; a character's own clips beside it are not the stage's pose)
  const samples = clipSamples(gltf, (t) => sample(gltf.scene, objects, t), "take");
  return { nodes, samples, animations: gltf.animations.map((a) => a.name) };
}

const out = {};
for (const file of process.argv.slice(2)) out[file] = await check(file);
process.stdout.write(JSON.stringify(out));
