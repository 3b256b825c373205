// The GL family: PPB_Graphics3D;1.0 (graphics3d.js), PPB_OpenGLES2;1.0 (gles2.js) and its
// extension interfaces (extensions.js), on WebGL 2, over one table of this worker's
// contexts and the helpers they share (common.js).

import { glShared } from "./common.js";
import * as graphics3d from "./graphics3d.js";
import * as gles2 from "./gles2.js";
import * as extensions from "./extensions.js";

export { glState } from "./common.js";

export function register(reg, cx) {
  const g = glShared(reg, cx);
  graphics3d.register(reg, g);
  gles2.register(g);
  extensions.register(g);
}
