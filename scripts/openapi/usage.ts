// A partner's server calling the Public Catalogue API with openapi-fetch and the types that
// openapi-typescript generates from the API's OpenAPI document (the partner's guide, "Generating a client").
// scripts/openapi.sh type-checks it with tsc --strict against types generated from
// edge/openapi.json in make test, so a change to the document that would break a program
// like this one fails there. It is checked, never run.
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./catalogue";

type Schemas = components["schemas"];
export type Catalogue = Client<paths>;

// catalogue returns a client of the API at baseUrl ("https://HOST/api/v2"). The token is a
// secret of your server: never send it to a browser.
export function catalogue(baseUrl: string, token: string): Catalogue {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });
}

// mdy writes a date as the search filters take it, MM-DD-YYYY; responses write YYYY-MM-DD.
export function mdy(d: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}-${d.getUTCFullYear()}`;
}

// retryAfter is how long a 429 asks us to wait, in milliseconds.
function retryAfter(response: Response): number {
  return Number(response.headers.get("Retry-After") ?? "1") * 1000;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// courses lists every course of the given types with its next class, if any.
export async function courses(api: Catalogue, types: Schemas["CourseType"][]): Promise<string[]> {
  const { data, error, response } = await api.GET("/public/courses", { params: { query: { type: types } } });
  if (error) throw new Error(`courses: ${response.status} ${error.message}`);
  return data.data.map((c: Schemas["CourseListItem"]) => {
    const next: Schemas["UpcomingClass"] | null = c.upcoming_class;
    if (next === null) return `${c.name}: no class planned`;
    const where: string = next.city ?? (next.type === "Online" ? "online" : "place to be announced");
    return `${c.name}: ${next.start} to ${next.end}, ${where}, ${next.cost} (provider's unit)`;
  });
}

// popular returns the names of the three most popular courses and their next class ids.
export async function popular(api: Catalogue): Promise<Array<[string, number | null]>> {
  const { data, error, response } = await api.GET("/public/popular");
  if (error) throw new Error(`popular: ${response.status} ${error.message}`);
  return data.map((c): [string, number | null] => [c.name, c.upcoming_class?.id ?? null]);
}

// search collects every page of a class search from a date on, waiting out 429s.
export async function search(api: Catalogue, text: string, from: Date, courseId?: number): Promise<Schemas["SearchItem"][]> {
  const items: Schemas["SearchItem"][] = [];
  const query = { search: text, start: mdy(from), limit: 50 };
  for (let page = 1; ; ) {
    const { data, error, response } = courseId === undefined
      ? await api.GET("/public/classes", { params: { query: { ...query, page } } })
      : await api.GET("/public/course/{id}/classes", { params: { path: { id: courseId }, query: { ...query, page } } });
    if (response.status === 429) {
      await sleep(retryAfter(response));
      continue;
    }
    if (error) throw new Error(`search: ${response.status} ${error.message}`);
    items.push(...data.data);
    if (page >= data.last_page) return items; // a page past the last would have data: []
    page++;
  }
}

// course returns a course with its description, which is staff-written HTML or null.
export async function course(api: Catalogue, id: number): Promise<Schemas["Course"] | undefined> {
  const { data, error, response } = await api.GET("/public/course/{id}", { params: { path: { id } } });
  if (response.status === 404) return undefined;
  if (error) throw new Error(`course ${id}: ${response.status} ${error.message}`);
  const html: string | null = data.description; // sanitise before rendering
  return { ...data, description: html };
}

// where describes a class's location, which is the string "online" or an object.
export function where(location: Schemas["ClassDetail"]["location"]): string {
  if (location === "online") return "Online";
  const parts = [location.name, location.room, location.city, location.state];
  return parts.filter((p): p is string => p !== null).join(", ") || "Room to be announced";
}

// classDetail reads the class of a search result: search ids are strings.
export async function classDetail(api: Catalogue, item: Schemas["SearchItem"]): Promise<Schemas["ClassDetail"] | undefined> {
  const id: string = item.id;
  const { data, error, response } = await api.GET("/public/class/{id}", { params: { path: { id: Number(id) } } });
  if (response.status === 404) return undefined;
  if (error) throw new Error(`class ${id}: ${response.status} ${error.message}`);
  const detail: Schemas["ClassDetail"] = data; // every property, the per-student ones included
  const registration: number | null = detail.registration_id; // null with an API token
  const testDate: string | null = detail.prev_reg_test_date;
  const downPayment: number | null = detail.down_payment === null ? null : Number(detail.down_payment); // cents
  console.log(where(detail.location), detail.open_seats ?? "no limit", registration, testDate, downPayment);
  return detail;
}
