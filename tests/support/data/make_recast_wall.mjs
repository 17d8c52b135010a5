// Builds recast_wall.navmesh with recastnavigation itself (the WebAssembly build in the npm
// packages @recast-navigation/core and @recast-navigation/generators 0.43.1; run in a scratch
// folder after `npm install` of both): a 10 x 4 m floor at y = 0 and a 0.2 m wall x in
// [4.9, 5.1], z in [-0.5, 3], 2 m high, leaving a 1 m gap at z in (3, 4). Recast cell 0.05 m,
// agent radius 0.2 m. Prints Detour's path from (2, 0, 1) to (8, 0, 1) and its length (7.5622 m).
import { init, exportNavMesh, NavMeshQuery } from '@recast-navigation/core';
import { generateSoloNavMesh } from '@recast-navigation/generators';
import fs from 'fs';

await init();
const positions = [];
const indices = [];
const quad = (a, b, c, d) => {
  const o = positions.length / 3;
  positions.push(...a, ...b, ...c, ...d);
  indices.push(o, o + 1, o + 2, o, o + 2, o + 3);
};
quad([0, 0, 0], [0, 0, 4], [10, 0, 4], [10, 0, 0]);
const [x0, x1, z0, z1, h] = [4.9, 5.1, -0.5, 3, 2];
quad([x0, h, z0], [x0, h, z1], [x1, h, z1], [x1, h, z0]);
quad([x0, 0, z0], [x0, h, z0], [x1, h, z0], [x1, 0, z0]);
quad([x0, 0, z1], [x1, 0, z1], [x1, h, z1], [x0, h, z1]);
quad([x0, 0, z0], [x0, 0, z1], [x0, h, z1], [x0, h, z0]);
quad([x1, 0, z0], [x1, h, z0], [x1, h, z1], [x1, 0, z1]);
const result = generateSoloNavMesh(positions, indices, {
  cs: 0.05, ch: 0.05, walkableRadius: 4, walkableHeight: 30, walkableClimb: 4, walkableSlopeAngle: 45,
});
if (!result.success) throw new Error(result.error);
fs.writeFileSync('recast_wall.navmesh', exportNavMesh(result.navMesh));
const path = new NavMeshQuery(result.navMesh).computePath({ x: 2, y: 0, z: 1 }, { x: 8, y: 0, z: 1 }).path;
let length = 0;
for (let i = 1; i < path.length; i++) length += Math.hypot(path[i].x - path[i - 1].x, path[i].z - path[i - 1].z);
console.log(JSON.stringify({ path, length }));
