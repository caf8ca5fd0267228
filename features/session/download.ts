"use client";
// Downloads through short-lived Blob URLs. Payload bytes are always served
// as application/octet-stream with a download name, so a blob can never be
// opened as a document in our origin (no script from a payload can run).

export function downloadBlob(data: BlobPart, filename: string, type = "application/octet-stream"): void {
  const blob = new Blob([data], { type });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  a.rel = "noopener";
  a.style.display = "none";
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}

export function downloadBytes(bytes: Uint8Array, filename: string): void {
  // Copy into a fresh ArrayBuffer-backed view (the source may be a subarray).
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  downloadBlob(copy, filename, "application/octet-stream");
}
