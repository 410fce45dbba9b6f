// The samples a check takes of a loaded glTF (three_check.mjs, stage_check.mjs): one of the static
// scene when the file has no animation (or none named `name`, when a name is given), else one per key time
// of its first animation (or the one named `name`), played with LoopOnce and clampWhenFinished (so the last
// key does not wrap to the first).
import * as THREE from "three";

export function clipSamples(gltf, sample, name = null) {
  const clip = name === null ? gltf.animations[0] : gltf.animations.find((a) => a.name === name);
  if (clip === undefined) return [sample(null)];
  const mixer = new THREE.AnimationMixer(gltf.scene);
  const action = mixer.clipAction(clip);
  action.setLoop(THREE.LoopOnce, 1);
  action.clampWhenFinished = true;
  return Array.from(clip.tracks[0].times, (t) => {
    action.reset().play();
    mixer.setTime(t);
    return sample(t);
  });
}
