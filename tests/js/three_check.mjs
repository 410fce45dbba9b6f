// Load glTF/GLB files with three.js (GLTFLoader.parseAsync under node) and report what three.js sees.
// Usage: node three_check.mjs FILE...   Prints one JSON object on stdout, per file:
//   {"bones": [{"node", "name", "parent"}],     skin order; node indices of the glTF, parent -1 if not a bone
//    "meshes": n,                              number of skinned meshes
//    "samples": [{"time", "positions", "quaternions", "skinned"}]}
// One sample of the static scene when the file has no animation, else one per key time of its first
// animation, played with LoopOnce and clampWhenFinished (so the last key does not wrap to the first).
// positions/quaternions: world position (x,y,z) and rotation (x,y,z,w) of each bone; skinned: every vertex
// of the skinned mesh after skinning (three.js SkinnedMesh.getVertexPosition), flattened.
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

function sample(scene, mesh, time) {
  scene.updateMatrixWorld(true);
  const p = new THREE.Vector3();
  const q = new THREE.Quaternion();
  const positions = [];
  const quaternions = [];
  for (const bone of mesh.skeleton.bones) {
    bone.getWorldPosition(p);
    bone.getWorldQuaternion(q);
    positions.push([p.x, p.y, p.z]);
    quaternions.push([q.x, q.y, q.z, q.w]);
  }
  const skinned = [];
  const count = mesh.geometry.attributes.position.count;
  for (let i = 0; i < count; i++) {
    mesh.getVertexPosition(i, p);
    skinned.push(p.x, p.y, p.z);
  }
  return { time, positions, quaternions, skinned };
}

async function check(file) {
  const bytes = fs.readFileSync(file);
  const data = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const gltf = await new GLTFLoader().parseAsync(data, "");
  const assoc = gltf.parser.associations;
  const meshes = [];
  gltf.scene.traverse((o) => o.isSkinnedMesh && meshes.push(o));
  if (meshes.length === 0) return { bones: [], meshes: 0, samples: [] };
  const mesh = meshes[0];
  const bones = mesh.skeleton.bones.map((b) => ({
    node: assoc.get(b)?.nodes ?? -1,
    name: b.name,
    parent: b.parent && b.parent.isBone ? (assoc.get(b.parent)?.nodes ?? -1) : -1,
  }));
  const samples = clipSamples(gltf, (t) => sample(gltf.scene, mesh, t));
  return { bones, meshes: meshes.length, samples };
}

const out = {};
for (const file of process.argv.slice(2)) out[file] = await check(file);
process.stdout.write(JSON.stringify(out));
