// akloc map: the position, the track and saved places on Leaflet, with
// callouts drawn as MapViewPlus draws them (DESIGN §11). The live page gets
// its data from the CLI's server (/track.geojson, /places.geojson,
// /countries.geojson, /basemap.json, /events); a snapshot has it all inlined
// (the base map in a script element of its own).
(function () {
  "use strict";

  const config = JSON.parse(document.getElementById("akloc-config").textContent);
  const snapshot = config.snapshot || null;
  document.documentElement.dataset.theme = config.theme || "auto";

  // MapViewPlus's numbers: the anchor is an equilateral triangle of height
  // 16 (its side is 16 / √3 · 2), the callout pans into view with 8 px to spare.
  const CALLOUT = {
    width: 300, height: 60, imageSize: 44, anchorHeight: 16, padding: 8,
    showSeconds: 0.8, damping: 0.4, hideSeconds: 0.15,
    showFrom: config.calloutShowFrom || "bottom", hideTo: config.calloutHideTo || "bottom",
  };
  CALLOUT.anchorWidth = (CALLOUT.anchorHeight / Math.sqrt(3)) * 2;

  // The map's own maximum zoom: without a tile layer Leaflet has none (Infinity), and fitting the view to a
  // track of one point (the recorder keeps a point per 5 m, so a drive starts with one) would ask for zoom
  // Infinity, whose pixel origin is NaN: the next layer to unproject (the accuracy circle) then throws
  // "Invalid LatLng object: (NaN, NaN)". 19 is where a tile layer's detail ends too.
  const MAX_ZOOM = 19;
  const map = L.map("map", { zoomControl: true, attributionControl: false, worldCopyJump: true, maxZoom: MAX_ZOOM });
  map.setView([20, 0], 2);
  const state = {
    following: !config.day, location: null, placemark: null, trackPoints: 0, callout: null, connected: false,
    day: { date: null, visits: 0, trips: 0, error: null, markers: [], lines: [] },
  };
  state.map = map;
  window.akloc = state;  // the browser tests read what the page drew

  // Base layer: country outlines over a plain sea, then lakes, rivers, admin-1 lines and place labels
  // (data/basemap.json); a tile layer only when asked, and then it is the base map.
  // An MBTiles file's layer (served at /tiles/) comes with its zooms and bounds (tileOptions).
  if (config.tiles) {
    state.tiles = { loaded: 0, failed: 0 };
    state.tileLayer = L.tileLayer(config.tiles, Object.assign({ maxZoom: MAX_ZOOM }, config.tileOptions || {}))
      .on("tileload", () => { state.tiles.loaded += 1; })
      .on("tileerror", () => { state.tiles.failed += 1; })
      .addTo(map);
  }
  // Panes, bottom up: tiles (200), land (300), lakes, rivers and admin-1 lines (350), the track and circles (400),
  // labels (450), markers (600), the callout (700).
  map.createPane("akloc-land").style.zIndex = 300;
  map.createPane("akloc-base").style.zIndex = 350;
  map.createPane("akloc-labels").style.zIndex = 450;
  map.getPane("akloc-base").style.pointerEvents = "none";
  map.getPane("akloc-labels").style.pointerEvents = "none";
  const countries = L.geoJSON(null, {
    pane: "akloc-land", interactive: false,
    style: { className: "akloc-country", weight: 0.6, fillOpacity: config.tiles ? 0 : 1 },
  }).addTo(map);
  const track = L.polyline([], { className: "akloc-track", weight: 3, smoothFactor: 0, noClip: true, interactive: false })
    .addTo(map);
  const accuracy = L.circle([0, 0], { radius: 0, className: "akloc-accuracy", weight: 1, fillOpacity: 0.15, interactive: false });
  let positionMarker = null;
  const placeMarkers = [];

  function note(text) {
    const element = document.getElementById("akloc-note");
    element.textContent = [element.textContent, text].filter(Boolean).join(" · ");
  }

  function layerError(name, collection) {
    if (collection && collection.akloc && collection.akloc.error) note(name + ": " + collection.akloc.error);
  }

  // [latitude, longitude] when both are numbers on the globe, else null: a fix without a position, or a
  // hand-edited snapshot, is left out rather than handed to Leaflet (which throws on it).
  function latLng(latitude, longitude) {
    const valid = (value, limit) => typeof value === "number" && Number.isFinite(value) && Math.abs(value) <= limit;
    return valid(latitude, 90) && valid(longitude, 180) ? [latitude, longitude] : null;
  }

  // A GeoJSON position ([longitude, latitude, …]) as a Leaflet one, or null.
  function fromPosition(position) {
    return Array.isArray(position) ? latLng(position[1], position[0]) : null;
  }

  function featuresOf(collection) {
    return collection && Array.isArray(collection.features) ? collection.features : [];
  }

  function coordinatesOf(feature, type) {
    const geometry = feature && feature.geometry;
    return geometry && geometry.type === type ? geometry.coordinates : null;
  }

  function load(path, inline) {
    if (snapshot) return Promise.resolve(inline);
    return fetch(path, { cache: "no-store" }).then((response) => response.json());
  }

  // MARK: Base map

  // Admin-1 lines from this zoom on (below it they crowd the country borders); labels per zoom, most
  // populous first, by population in thousands: a city of a million from zoom 4, every town of 5000 from 10.
  // Rivers: the major ones (the file's first majorRivers lines) where a country fills the view, the rest
  // where a region does; on a continent they would be a tangle.
  const ADMIN1_MIN_ZOOM = 4;
  const MAJOR_RIVERS_MIN_ZOOM = 5;
  const RIVERS_MIN_ZOOM = 8;
  const LABEL_MIN_THOUSANDS = [5000, 5000, 5000, 2000, 1000, 300, 100, 40, 20, 10];
  const MAX_LABELS = 150;
  const base = {
    admin1: null, lakes: null, majorRivers: null, otherRivers: null, places: [],
    labels: L.layerGroup([], { pane: "akloc-labels" }),
  };
  state.basemap = { admin1Lines: 0, lakes: 0, rivers: 0, majorRivers: 0, places: 0, labels: [] };

  function cssColour(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  // [x0, y0, dx1, dy1, …] in 1/scale degree (scripts/geodata/basemap.py) as Leaflet positions.
  function decodeLine(flat, scale) {
    const line = [];
    let x = 0, y = 0;
    for (let i = 0; i + 1 < flat.length; i += 2) {
      x += flat[i];
      y += flat[i + 1];
      const position = latLng(y / scale, x / scale);
      if (position) line.push(position);
    }
    return line;
  }

  function showBasemap(document_) {
    if (!document_ || document_.format !== "akloc-basemap" || document_.version !== 1) {
      note("base map: " + (document_ && document_.akloc && document_.akloc.error || "not an akloc base map"));
      return;
    }
    layerError("base map", document_);
    if (config.tiles) return;  // the tiles are the base map
    const scale = document_.scale, renderer = L.canvas({ pane: "akloc-base", padding: 0.5 });
    const lines = (document_.admin1 || []).filter(Array.isArray).map((flat) => decodeLine(flat, scale))
      .filter((line) => line.length > 1);
    const lakes = (document_.lakes || []).filter(Array.isArray)
      .map((rings) => rings.filter(Array.isArray).map((flat) => decodeLine(flat, scale)).filter((ring) => ring.length > 2))
      .filter((rings) => rings.length > 0);
    base.lakes = L.polygon(lakes, {
      renderer: renderer, interactive: false, weight: 0.6, color: cssColour("--border"),
      fillColor: cssColour("--sea"), fillOpacity: 1, smoothFactor: 1,
    }).addTo(map);
    const rivers = (document_.rivers || []).map((flat, index) => ({ major: index < document_.majorRivers, flat }))
      .filter((river) => Array.isArray(river.flat))
      .map((river) => ({ major: river.major, line: decodeLine(river.flat, scale) }))
      .filter((river) => river.line.length > 1);
    const riverLayer = (major) => L.polyline(rivers.filter((river) => river.major === major).map((river) => river.line), {
      renderer: renderer, interactive: false, weight: major ? 1.4 : 1, color: cssColour("--river"), smoothFactor: 1,
    });
    base.majorRivers = riverLayer(true);
    base.otherRivers = riverLayer(false);
    base.admin1 = L.polyline(lines, {
      renderer: renderer, interactive: false, weight: 0.8, color: cssColour("--admin1"), dashArray: "4 3", smoothFactor: 1,
    });
    const placeScale = document_.placeScale;
    base.places = (document_.places || []).filter((row) => Array.isArray(row) && typeof row[3] === "string")
      .map((row) => ({ position: latLng(row[1] / placeScale, row[0] / placeScale), thousands: row[2], name: row[3] }))
      .filter((place) => place.position && typeof place.thousands === "number");
    base.labels.addTo(map);
    state.admin1 = base.admin1;
    state.basemap = {
      admin1Lines: lines.length, lakes: lakes.length, rivers: rivers.length,
      majorRivers: rivers.filter((river) => river.major).length, places: base.places.length, labels: [],
    };
    updateBasemap();
  }

  // The labels that fit: most populous first, none overlapping another, at most MAX_LABELS.
  function updateBasemap() {
    if (!base.lakes) return;
    const zoom = map.getZoom();
    const show = (layer, shown) => {
      const added = shown && !map.hasLayer(layer);
      if (shown) layer.addTo(map); else layer.remove();
      return added;
    };
    const majorAdded = show(base.majorRivers, zoom >= MAJOR_RIVERS_MIN_ZOOM);
    const otherAdded = show(base.otherRivers, zoom >= RIVERS_MIN_ZOOM);
    show(base.admin1, zoom >= ADMIN1_MIN_ZOOM);
    // The canvas draws in the order layers were added: rivers added later would cover the dashed lines
    // that follow them (the Connecticut is the Vermont–New Hampshire line).
    if ((majorAdded || otherAdded) && map.hasLayer(base.admin1)) base.admin1.bringToFront();
    const minimum = zoom < LABEL_MIN_THOUSANDS.length ? LABEL_MIN_THOUSANDS[Math.max(0, Math.floor(zoom))] : 0;
    const bounds = map.getBounds(), size = map.getSize(), taken = [], names = [];
    base.labels.clearLayers();
    for (const place of base.places) {
      if (taken.length >= MAX_LABELS) break;
      if (place.thousands < minimum || !bounds.contains(place.position)) continue;
      const point = map.latLngToContainerPoint(place.position);
      const major = place.thousands >= 1000;
      const box = { left: point.x - 4, top: point.y - 9, right: point.x + 10 + place.name.length * (major ? 7.5 : 6.5), bottom: point.y + 9 };
      if (box.right > size.x || box.top < 0 || box.bottom > size.y) continue;
      if (taken.some((b) => b.left < box.right && box.left < b.right && b.top < box.bottom && box.top < b.bottom)) continue;
      taken.push(box);
      names.push(place.name);
      L.marker(place.position, {
        pane: "akloc-labels", interactive: false, keyboard: false,
        icon: L.divIcon({
          className: "akloc-label" + (major ? " akloc-label-major" : ""), iconSize: null, iconAnchor: [3, 8],
          html: '<span class="akloc-label-dot"></span>' + escapeHTML(place.name),
        }),
      }).addTo(base.labels);
    }
    state.basemap.labels = names;
  }

  map.on("zoomend moveend", updateBasemap);

  // MARK: Layers

  function showCountries(collection) {
    countries.addData(collection);
    layerError("countries", collection);
  }

  function showTrack(collection) {
    const lines = featuresOf(collection)
      .map((feature) => coordinatesOf(feature, "LineString"))
      .filter(Array.isArray)
      .map((positions) => positions.map(fromPosition).filter(Boolean))
      .filter((line) => line.length > 0);
    track.setLatLngs(lines);
    state.trackPoints = lines.reduce((sum, line) => sum + line.length, 0);
    layerError("track", collection);
    if (!state.location && state.trackPoints > 0) map.fitBounds(track.getBounds(), { padding: [20, 20] });
  }

  function iconFor(url, size, className) {
    return L.divIcon({
      className: "akloc-marker " + className, iconSize: [size, size], iconAnchor: [size / 2, size / 2],
      html: '<img alt="" src="' + url + '">',
    });
  }

  function showPlaces(collection) {
    for (const feature of featuresOf(collection)) {
      const position = fromPosition(coordinatesOf(feature, "Point"));
      if (!position) continue;
      const [lat, lon] = position;
      const properties = feature.properties || {};
      const marker = L.marker([lat, lon], {
        icon: iconFor(properties.image || config.images.pin, 32, "akloc-place"), title: properties.name, keyboard: false,
      }).addTo(map);
      marker.getElement().dataset.place = properties.name;
      marker.on("click", () => openCallout(marker, () => placeCallout(properties, lat, lon)));
      placeMarkers.push(marker);
    }
    layerError("places", collection);
  }

  function showLocation(location, placemark) {
    const latlng = location && latLng(location.latitude, location.longitude);
    if (!latlng) return;  // the last position drawn stays
    state.location = location;
    state.placemark = placemark || null;
    if (!positionMarker) {
      positionMarker = L.marker(latlng, { icon: iconFor(config.images.marker, 40, "akloc-position"), keyboard: false, zIndexOffset: 1000 })
        .addTo(map);
      positionMarker.on("click", () => openCallout(positionMarker, positionCallout));
      accuracy.addTo(map);
      // The first position centres the page, unless it opened on a day of the timeline.
      if (!state.day.date && !config.day) map.setView(latlng, Math.max(map.getZoom(), 13));
    } else {
      positionMarker.setLatLng(latlng);
    }
    // The default arrow points north; turned to the course. A custom image is drawn as it is.
    const image = positionMarker.getElement().querySelector("img");
    image.style.transform = config.rotateMarker && isFinite(location.course) ? "rotate(" + location.course + "deg)" : "";
    accuracy.setLatLng(latlng);
    accuracy.setRadius(isFinite(location.horizontalAccuracy) ? location.horizontalAccuracy : 0);
    if (state.following) map.panTo(latlng, { animate: false });
    if (state.callout && state.callout.marker === positionMarker) refreshCallout();
  }

  // MARK: The day (visits and trips of the timeline, docs/timeline.md)

  const dayLayer = L.layerGroup().addTo(map);
  const dayPicker = document.getElementById("akloc-day-picker");

  // Local midnight of "YYYY-MM-DD" and of the next day, in epoch seconds: the browser's own calendar day.
  function dayRange(date) {
    const found = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date || "");
    if (!found) return null;
    const [year, month, day] = [Number(found[1]), Number(found[2]) - 1, Number(found[3])];
    const start = new Date(year, month, day), end = new Date(year, month, day + 1);
    return isNaN(start) || start.getDate() !== day ? null : [start.getTime() / 1000, end.getTime() / 1000];
  }

  function dayText(date) {
    const pad = (value) => String(value).padStart(2, "0");
    return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate());
  }

  function chooseDay(date) {
    dayPicker.value = date || "";
    const range = dayRange(date);
    if (!range) return showDay(null, null);
    if (snapshot) return;  // a snapshot holds one day, inlined
    state.day.loading = date;
    fetch("/day.geojson?since=" + range[0] + "&until=" + range[1], { cache: "no-store" })
      .then((response) => response.ok ? response.json()
        : response.text().then((text) => ({ akloc: { error: text.trim() || "HTTP " + response.status } })))
      .catch((error) => ({ akloc: { error: String(error) } }))
      .then((layer) => { if (dayPicker.value === date) showDay(date, layer); });
  }

  function shiftDay(days) {
    const range = dayRange(dayPicker.value);
    const from = range ? new Date(range[0] * 1000) : new Date();
    chooseDay(dayText(new Date(from.getFullYear(), from.getMonth(), from.getDate() + days)));
  }

  dayPicker.addEventListener("change", () => chooseDay(dayPicker.value));
  document.getElementById("akloc-day-previous").addEventListener("click", () => shiftDay(-1));
  document.getElementById("akloc-day-next").addEventListener("click", () => shiftDay(1));

  function showDay(date, layer) {
    if (state.callout && state.day.markers.includes(state.callout.marker)) closeCallout();
    dayLayer.clearLayers();
    const day = { date: date, visits: 0, trips: 0, distance: 0, error: null, markers: [], lines: [] };
    state.day = day;
    const summary = document.getElementById("akloc-day-summary");
    summary.textContent = "";
    if (!date) return;
    const bounds = L.latLngBounds([]);
    for (const feature of featuresOf(layer)) {
      const properties = (feature && feature.properties) || {};
      if (properties.kind === "trip") {
        const trip = properties.trip || {};
        const line = (coordinatesOf(feature, "LineString") || []).map(fromPosition).filter(Boolean);
        if (line.length < 2) continue;
        const polyline = L.polyline(line, {
          className: "akloc-trip" + (trip.unknownPath ? " akloc-trip-unknown" : ""), weight: 4, smoothFactor: 1,
        }).addTo(dayLayer);
        polyline.bindTooltip(tripText(trip), { sticky: true });
        day.lines.push({ points: line.length, text: tripText(trip), unknownPath: !!trip.unknownPath });
        if (isFinite(trip.distance)) day.distance += trip.distance;
        day.trips += 1;
        bounds.extend(polyline.getBounds());
      } else if (properties.kind === "visit") {
        const position = fromPosition(coordinatesOf(feature, "Point"));
        if (!position) continue;
        const visit = properties.visit || {};
        day.visits += 1;
        const marker = L.marker(position, {
          icon: L.divIcon({
            className: "akloc-visit", iconSize: [26, 26], iconAnchor: [13, 13],
            html: "<span>" + day.visits + "</span>",
          }),
          // Above the live position (1000): a day on screen is what the user is looking at.
          title: visitTitle(visit), keyboard: false, zIndexOffset: 2000,
        }).addTo(dayLayer);
        marker.getElement().dataset.visit = String(day.visits);
        marker.on("click", () => openCallout(marker, () => visitCallout(visit)));
        day.markers.push(marker);
        bounds.extend(position);
      }
    }
    day.error = layer && layer.akloc && layer.akloc.error || null;
    const counts = day.visits + (day.visits === 1 ? " visit" : " visits") + ", " +
      day.trips + (day.trips === 1 ? " trip" : " trips") + (day.distance > 0 ? ", " + formatDistance(day.distance) : "");
    summary.textContent = day.error ? "day: " + day.error : day.visits + day.trips ? counts : "nothing recorded that day";
    if (bounds.isValid()) {
      state.following = false;
      if (!snapshot) document.getElementById("akloc-follow").hidden = false;
      map.fitBounds(bounds, { padding: [48, 48], maxZoom: 16, animate: false });
    }
  }

  // "HH:MM" in the zone of where it happened (the visit's timeZone), else the browser's.
  function clockIn(value, zone) {
    const date = new Date(value);
    if (value === undefined || value === null || isNaN(date)) return "";
    const options = { hour: "2-digit", minute: "2-digit", hourCycle: "h23" };
    try {
      return date.toLocaleTimeString("en-GB", Object.assign({ timeZone: zone || undefined }, options));
    } catch (error) {  // a zone this browser does not know
      return date.toLocaleTimeString("en-GB", options);
    }
  }

  function formatDuration(seconds) {
    const minutes = Math.round(seconds / 60);
    if (minutes < 60) return minutes + " min";
    const hours = Math.floor(minutes / 60), rest = minutes % 60;
    if (hours < 24) return hours + " h" + (rest ? " " + rest + " min" : "");
    return Math.floor(hours / 24) + " d " + (hours % 24) + " h";
  }

  function placeLine(placemark) {
    return [placemark.locality || placemark.name, placemark.administrativeArea, placemark.country]
      .filter(Boolean).join(", ");
  }

  function visitTitle(visit) {
    const placemark = visit.placemark || {};
    if (visit.place) return visit.place;
    const line = placeLine(placemark);
    return line ? "near " + line : "Visit";
  }

  function visitCallout(visit) {
    const zone = visit.timeZone && visit.timeZone.identifier;
    const arrival = clockIn(visit.arrival, zone), departure = clockIn(visit.departure, zone);
    const seconds = (new Date(visit.departure) - new Date(visit.arrival)) / 1000;
    const duration = visit.departure && isFinite(seconds) ? formatDuration(seconds) : "under way";
    const placemark = visit.placemark || {};
    const fields = {
      place: visitTitle(visit), arrival: arrival, departure: departure, duration: duration,
      address: placemark.formattedAddress || "", radius: isFinite(visit.radius) ? Math.round(visit.radius) + " m" : "",
    };
    return {
      image: config.images.pin,
      title: fields.place,
      subtitle: arrival + "–" + departure + " · " + duration,
      detail: Object.entries(fields).filter(([, v]) => v).map(([k, v]) => k + ": " + v).join("\n"),
      fields: fields,
    };
  }

  // As `akloc timeline` says it: "14.2 km in 25 min, max 82 km/h".
  function tripText(trip) {
    const parts = [];
    if (isFinite(trip.distance)) parts.push(formatDistance(trip.distance));
    if (isFinite(trip.duration)) parts.push("in " + formatDuration(trip.duration));
    let text = parts.join(" ");
    if (isFinite(trip.maxSpeed) && trip.maxSpeed > 0) text += ", max " + Math.round(trip.maxSpeed * 3.6) + " km/h";
    return (text || "trip") + (trip.unknownPath ? " (path unknown)" : "");
  }

  // MARK: The sky (the receiver's satellites, docs/map.md)

  // Radius of the horizon in the plot's units (its viewBox is 200 wide): elevation 90° at the centre.
  const SKY_RADIUS = 90;
  state.sky = { value: null, plotted: [] };
  const skyPanel = document.getElementById("akloc-sky");
  document.getElementById("akloc-sky-toggle").addEventListener("click", (event) => {
    const collapsed = skyPanel.classList.toggle("akloc-collapsed");
    event.currentTarget.setAttribute("aria-expanded", String(!collapsed));
  });

  function svgElement(name, attributes, parent) {
    const element = document.createElementNS("http://www.w3.org/2000/svg", name);
    for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
    parent.appendChild(element);
    return element;
  }

  // The `satellites` value as aklocd gives it (null before the first SKY: no panel). Text goes in as text.
  function showSky(value) {
    const plot = document.getElementById("akloc-sky-plot");
    plot.replaceChildren();
    state.sky = { value: value && typeof value === "object" ? value : null, plotted: [] };
    skyPanel.hidden = !state.sky.value;
    if (!state.sky.value) return;
    for (const elevation of [0, 30, 60]) {
      svgElement("circle", { r: (SKY_RADIUS * (90 - elevation)) / 90, class: "akloc-sky-grid" }, plot);
    }
    svgElement("path", { d: "M -90 0 H 90 M 0 -90 V 90", class: "akloc-sky-grid" }, plot);
    for (const [text, x, y] of [["N", 0, -96], ["E", 96, 0], ["S", 0, 96], ["W", -96, 0]]) {
      svgElement("text", { x: x, y: y, class: "akloc-sky-label" }, plot).textContent = text;
    }
    const number = (v) => typeof v === "number" && Number.isFinite(v);
    const satellites = Array.isArray(value.satellites) ? value.satellites : [];
    // Unused first, so the used ones are drawn on top where they overlap.
    for (const satellite of satellites.filter((s) => s && !s.used).concat(satellites.filter((s) => s && s.used))) {
      const { elevation, azimuth } = satellite;
      if (!number(elevation) || !number(azimuth) || elevation < 0 || elevation > 90) continue;
      const r = (SKY_RADIUS * (90 - elevation)) / 90, radians = (azimuth * Math.PI) / 180;
      const x = r * Math.sin(radians), y = -r * Math.cos(radians);
      const group = svgElement("g", {
        class: "akloc-sat" + (satellite.used ? " akloc-sat-used" : ""), transform: "translate(" + x + " " + y + ")",
        "data-prn": String(satellite.prn),
      }, plot);
      svgElement("circle", { r: 7 }, group);
      svgElement("text", {}, group).textContent = String(satellite.prn);
      svgElement("title", {}, group).textContent = [satellite.constellation, "PRN " + satellite.prn,
        "elevation " + elevation + "°", "azimuth " + azimuth + "°",
        number(satellite.signal) ? satellite.signal + " dB-Hz" : "", satellite.used ? "used" : "not used"]
        .filter(Boolean).join(", ");
      state.sky.plotted.push({ prn: satellite.prn, x: x, y: y, used: !!satellite.used });
    }
    const caption = [number(value.used) && number(value.visible) ? value.used + " used of " + value.visible : "",
      number(value.hdop) ? "HDOP " + value.hdop : ""].filter(Boolean).join(" · ");
    document.getElementById("akloc-sky-caption").textContent = caption;
  }

  // MARK: Callouts

  function escapeHTML(text) {
    return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  }

  function formatTime(value) {
    if (value === undefined || value === null) return "";
    const date = typeof value === "number" ? new Date(value * 1000) : new Date(value);
    return isNaN(date) ? String(value) : date.toLocaleString();
  }

  function formatClock(value) {
    if (value === undefined || value === null) return "";
    const date = typeof value === "number" ? new Date(value * 1000) : new Date(value);
    return isNaN(date) ? "" : date.toLocaleTimeString();
  }

  function distance(lat1, lon1, lat2, lon2) {
    const rad = Math.PI / 180, r = 6371008.8;
    const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 +
      Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lon2 - lon1) * rad) / 2) ** 2;
    return 2 * r * Math.asin(Math.sqrt(a));
  }

  function formatDistance(metres) {
    return metres >= 1000 ? (metres / 1000).toFixed(1) + " km" : Math.round(metres) + " m";
  }

  function positionCallout() {
    const l = state.location;
    const speed = isFinite(l.speed) ? (l.speed * 3.6).toFixed(1) + " km/h" : "speed unknown";
    const course = isFinite(l.course) ? Math.round(l.course) + "°" : "course unknown";
    const acc = isFinite(l.horizontalAccuracy) ? "±" + Math.round(l.horizontalAccuracy) + " m" : "accuracy unknown";
    const place = state.placemark && (state.placemark.formattedAddress || state.placemark.name);
    const fields = {
      time: formatTime(l.timestamp), speed: speed, course: course, accuracy: acc, placemark: place || "",
      latitude: l.latitude.toFixed(5), longitude: l.longitude.toFixed(5),
    };
    return {
      image: config.images.marker,
      title: place || "My location",
      subtitle: [speed, course, acc, formatClock(l.timestamp)].filter(Boolean).join(" · "),
      detail: Object.entries(fields).filter(([, v]) => v).map(([k, v]) => k + ": " + v).join("\n"),
      fields: fields,
    };
  }

  function placeCallout(properties, lat, lon) {
    const away = state.location ? formatDistance(distance(state.location.latitude, state.location.longitude, lat, lon)) + " away" : "";
    const fields = { name: properties.name, note: properties.note || "", distance: away, radius: properties.radius ? properties.radius + " m" : "" };
    return {
      image: properties.image || config.images.pin,
      title: properties.name,
      subtitle: [properties.note, away].filter(Boolean).join(" · "),
      detail: Object.entries(fields).filter(([, v]) => v).map(([k, v]) => k + ": " + v).join("\n"),
      fields: fields,
    };
  }

  function calloutHTML(model) {
    if (config.calloutTemplate) {
      const values = Object.assign({}, model.fields, { title: model.title, subtitle: model.subtitle, image: model.image });
      return '<div class="akloc-callout-custom">' +
        config.calloutTemplate.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, key) => escapeHTML(values[key] === undefined ? "" : values[key])) +
        "</div>";
    }
    return '<div class="akloc-callout">' +
      '<img class="akloc-callout-image" alt="" src="' + escapeHTML(model.image) + '">' +
      '<div class="akloc-callout-text"><div class="akloc-callout-title">' + escapeHTML(model.title) + "</div>" +
      '<div class="akloc-callout-subtitle">' + escapeHTML(model.subtitle) + "</div></div>" +
      '<button class="akloc-callout-detail" type="button" title="Details">i</button></div>';
  }

  function anchorSVG() {
    const w = CALLOUT.anchorWidth, h = CALLOUT.anchorHeight;
    return '<svg class="akloc-anchor" width="' + w + '" height="' + h + '" viewBox="0 0 ' + w + " " + h + '">' +
      '<polygon points="0,0 ' + w + ",0 " + w / 2 + "," + h + '"/></svg>';
  }

  // A damped spring from 1 to 0 (UIView's usingSpringWithDamping), sampled for the Web Animations API.
  function springKeyframes(offset, axis) {
    const zeta = CALLOUT.damping, frames = [], steps = 48;
    const omega = 6 / (zeta * CALLOUT.showSeconds);  // settled (e^-6) by the end
    const omegaD = omega * Math.sqrt(1 - zeta * zeta);
    for (let i = 0; i <= steps; i++) {
      const t = (i / steps) * CALLOUT.showSeconds;
      const x = i === steps ? 0 : Math.exp(-zeta * omega * t) * (Math.cos(omegaD * t) + ((zeta * omega) / omegaD) * Math.sin(omegaD * t));
      const d = offset * x;
      frames.push({ transform: axis === "x" ? "translateX(" + d + "px)" : "translateY(" + d + "px)", opacity: Math.min(1, (i / steps) * 4) });
    }
    return frames;
  }

  const directions = { top: ["y", -1], bottom: ["y", 1], left: ["x", -1], right: ["x", 1] };

  function openCallout(marker, modelFor) {
    if (state.callout && state.callout.marker === marker) return;
    closeCallout();
    const pane = map.getPane("popupPane");
    const holder = L.DomUtil.create("div", "akloc-callout-anchor-view", pane);
    const view = L.DomUtil.create("div", "akloc-callout-and-anchor", holder);
    L.DomEvent.disableClickPropagation(view);
    L.DomEvent.disableScrollPropagation(view);
    state.callout = { marker: marker, modelFor: modelFor, holder: holder, view: view };
    refreshCallout();
    place();
    const [axis, sign] = directions[CALLOUT.showFrom] || directions.bottom;
    // Kept, so the browser tests can wait for the spring to settle rather than sleep.
    state.callout.shown = view.animate(springKeyframes(sign * 40, axis), { duration: CALLOUT.showSeconds * 1000, fill: "none" });
    panIntoView();
  }

  function refreshCallout() {
    const callout = state.callout;
    const model = callout.modelFor();
    callout.model = model;
    const title = callout.view.querySelector(".akloc-callout-title");
    if (title && !config.calloutTemplate) {
      // A new fix under an open callout: the same view, new text (it stays where the user is looking).
      title.textContent = model.title;
      callout.view.querySelector(".akloc-callout-subtitle").textContent = model.subtitle;
      callout.view.querySelector(".akloc-callout-image").src = model.image;
    } else {
      callout.view.innerHTML = calloutHTML(model) + anchorSVG();
      const detail = callout.view.querySelector(".akloc-callout-detail");
      if (detail) detail.addEventListener("click", () => showDetail(callout.model.detail));
    }
    place();
  }

  function place() {
    const callout = state.callout;
    if (!callout) return;
    const point = map.latLngToLayerPoint(callout.marker.getLatLng());
    const iconHeight = callout.marker.options.icon.options.iconSize[1];
    L.DomUtil.setPosition(callout.holder, point);
    const box = callout.view;
    box.style.left = -box.offsetWidth / 2 + "px";
    box.style.top = -(box.offsetHeight + iconHeight / 2) + "px";
  }

  // Pans so the whole callout shows with CALLOUT.padding px to spare (MapViewPlus scrolls the map the same way).
  function panIntoView() {
    const callout = state.callout;
    if (!callout) return;
    const mapRect = map.getContainer().getBoundingClientRect();
    const rect = callout.view.getBoundingClientRect();
    const p = CALLOUT.padding;
    let dx = 0, dy = 0;
    if (rect.left < mapRect.left + p) dx = rect.left - (mapRect.left + p);
    else if (rect.right > mapRect.right - p) dx = rect.right - (mapRect.right - p);
    if (rect.top < mapRect.top + p) dy = rect.top - (mapRect.top + p);
    else if (rect.bottom > mapRect.bottom - p) dy = rect.bottom - (mapRect.bottom - p);
    if (dx || dy) {
      state.following = false;
      map.panBy([dx, dy], { animate: false });
    }
  }

  function closeCallout() {
    const callout = state.callout;
    if (!callout) return;
    state.callout = null;
    const [axis, sign] = directions[CALLOUT.hideTo] || directions.bottom;
    const to = axis === "x" ? "translateX(" + sign * 20 + "px)" : "translateY(" + sign * 20 + "px)";
    const animation = callout.view.animate([{ transform: "none", opacity: 1 }, { transform: to, opacity: 0 }],
      { duration: CALLOUT.hideSeconds * 1000, easing: "ease-in", fill: "forwards" });
    animation.onfinish = () => callout.holder.remove();
  }

  function showDetail(text) {
    const element = document.getElementById("akloc-detail");
    element.textContent = text;
    element.hidden = false;
  }

  map.on("click", () => {
    closeCallout();
    document.getElementById("akloc-detail").hidden = true;
  });
  map.on("zoomend viewreset", place);
  map.on("dragstart", () => { state.following = false; document.getElementById("akloc-follow").hidden = false; });
  document.getElementById("akloc-follow").addEventListener("click", () => {
    state.following = true;
    document.getElementById("akloc-follow").hidden = true;
    if (state.location) map.panTo([state.location.latitude, state.location.longitude]);
  });

  // MARK: Data

  function setStatus(status) {
    state.connected = !!status.connected;
    const element = document.getElementById("akloc-status");
    element.hidden = state.connected;
    element.textContent = status.connected ? "" : "reconnecting to aklocd…";
    element.title = status.reason || "";
  }

  function inlineBasemap() {
    const element = document.getElementById("akloc-basemap");
    return element ? JSON.parse(element.textContent) : null;
  }

  const loads = [
    load("/countries.geojson", snapshot && snapshot.countries).then(showCountries),
    load("/basemap.json", snapshot && inlineBasemap()).then(showBasemap),
    load("/track.geojson", snapshot && snapshot.track).then(showTrack),
    load("/places.geojson", snapshot && snapshot.places).then(showPlaces),
  ];
  Promise.all(loads).then(() => {
    state.loaded = true;
    if (snapshot) {
      if (snapshot.location) showLocation(snapshot.location, snapshot.placemark);
      if (snapshot.satellites) showSky(snapshot.satellites);
      if (snapshot.day) {
        dayPicker.value = snapshot.day.date;
        showDay(snapshot.day.date, snapshot.day.layer);
      }
      // The snapshot holds its one day: there is no server to ask for another.
      for (const id of ["akloc-day-picker", "akloc-day-previous", "akloc-day-next"]) {
        document.getElementById(id).disabled = true;
      }
      note("snapshot of " + formatTime(snapshot.createdAt));
      return;
    }
    if (config.day) chooseDay(config.day);
    const events = new EventSource("/events");
    events.addEventListener("status", (event) => setStatus(JSON.parse(event.data)));
    events.addEventListener("location", (event) => {
      const data = JSON.parse(event.data);
      showLocation(data.location, data.placemark);
    });
    events.addEventListener("sky", (event) => showSky(JSON.parse(event.data)));
    events.onerror = () => setStatus({ connected: false, reason: "the akloc map server is not answering" });
  });
})();
