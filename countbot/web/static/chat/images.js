// Images attached to a message: read as base64 and, when large, scaled down and re-encoded so a
// message stays well under the WebSocket frame limit (1 MiB by default).

const TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const MAX_SIDE = 2048;
const MAX_BASE64 = 700_000;
const JPEG_QUALITY = 0.85;

export class ImageError extends Error {}

/** {media_type, data (base64), preview (object URL)} for an image file. */
export async function readImage(file) {
  if (!TYPES.has(file.type)) throw new ImageError("image.unsupported");
  let blob = file;
  if (file.size * (4 / 3) > MAX_BASE64 || (await longestSide(file)) > MAX_SIDE) {
    blob = await shrink(file);
  }
  return { media_type: blob.type, data: await base64(blob), preview: URL.createObjectURL(blob) };
}

async function longestSide(file) {
  const bitmap = await createImageBitmap(file);
  const side = Math.max(bitmap.width, bitmap.height);
  bitmap.close();
  return side;
}

/** Re-encode as JPEG, smaller each round, until the base64 fits. */
async function shrink(file) {
  const bitmap = await createImageBitmap(file).catch(() => {
    throw new ImageError("image.unreadable");
  });
  let scale = Math.min(1, MAX_SIDE / Math.max(bitmap.width, bitmap.height));
  try {
    for (let round = 0; round < 6; round += 1) {
      const canvas = document.createElement("canvas");
      canvas.width = Math.max(1, Math.round(bitmap.width * scale));
      canvas.height = Math.max(1, Math.round(bitmap.height * scale));
      const context = canvas.getContext("2d");
      context.fillStyle = "#fff"; // transparent areas would turn black in JPEG
      context.fillRect(0, 0, canvas.width, canvas.height);
      context.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
      const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", JPEG_QUALITY));
      if (blob && blob.size * (4 / 3) <= MAX_BASE64) return blob;
      scale *= 0.7;
    }
  } finally {
    bitmap.close();
  }
  throw new ImageError("image.tooLarge");
}

function base64(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(",", 2)[1] || "");
    reader.onerror = () => reject(new ImageError("image.unreadable"));
    reader.readAsDataURL(blob);
  });
}
