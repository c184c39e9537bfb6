// The static edition's live figures (site/build.py): each .live-frames box holds the notebook's
// controls and, in its JSON, every frame drawn in advance by the notebook's own callback
// (site/frames.py). A change of a control shows the frame of the controls' values, its printed
// text and its alt text (the figure in words, course/describe/) together, once the image is
// decoded; the frames next to it are fetched meanwhile, so that the next step of a slider is ready.
document.addEventListener("DOMContentLoaded", () => {
  for (const box of document.querySelectorAll(".live-frames")) {
    const data = JSON.parse(box.querySelector("script.live-frames-data").textContent);
    const img = box.querySelector("img.live-frames-image");
    const text = box.querySelector(".live-frames-text");
    const inputs = data.controls.map((_, i) => box.querySelector(`[data-control="${i}"]`));
    const index = (i) => {   // the option index (of all the notebook's values) a control shows
      const el = inputs[i];
      if (el.type === "range") return data.controls[i].drawn[Number(el.value)];
      if (el.tagName === "SELECT") return Number(el.value);
      return Number(el.querySelector("input:checked").value);
    };
    const cache = new Map();
    const load = (key) => {
      if (!cache.has(key) && data.frames[key]) {
        const image = new Image();
        image.src = box.dataset.frames + data.frames[key][0];
        cache.set(key, image.decode().catch(() => {}));
      }
      return cache.get(key);
    };
    const neighbours = (combo) => data.controls.flatMap((c, i) => [-1, 1].map((d) => {
      const at = c.drawn.indexOf(combo[i]) + d;
      return at < 0 || at >= c.drawn.length ? null
        : combo.map((v, j) => (j === i ? c.drawn[at] : v)).join("-");
    })).filter(Boolean);
    const show = async (event) => {
      const combo = data.controls.map((_, i) => index(i));
      const key = combo.join("-");
      inputs.forEach((el, i) => {
        if (el.type !== "range") return;
        const label = data.controls[i].labels[combo[i]];
        el.setAttribute("aria-valuetext", label);
        el.parentElement.querySelector("output").textContent = label;
      });
      await load(key);
      if (key !== data.controls.map((_, i) => index(i)).join("-")) return;   // changed meanwhile
      const [file, printed, words] = data.frames[key];
      img.src = box.dataset.frames + file;
      await img.decode().catch(() => {});   // the page's own image ready to paint, then the text
      if (key !== data.controls.map((_, i) => index(i)).join("-")) return;
      img.alt = data.alt ? `${data.alt}: ${words}` : words;   // where it is, then it in words
      text.textContent = printed;
      requestAnimationFrame(() => {
        box.dataset.shown = key;
        box.dataset.switchMs = (performance.now() - event.timeStamp).toFixed(1);
      });
      neighbours(combo).forEach(load);
    };
    box.addEventListener("input", show);
    neighbours(data.controls.map((_, i) => index(i))).forEach(load);
  }
});
